// vitest global setup: one directory under the system's temp dir for everything this run's tests make through
// tempDir (data directories, homes, browser profiles), removed whole when the run ends. Without it every run left
// thousands of directories in /tmp. A tree that cannot be removed (a mount a test left under it, a directory a
// test made unreadable to a user who is not root) is left in place with a warning: a cleanup never fails a run,
// and it never crosses into a file system a test mounted there.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';

/** The mount points at or under `root` (Linux: /proc/self/mountinfo; elsewhere none are known). */
function mountsUnder(root: string): string[] {
  let info: string;
  try {
    info = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  // Field 5 is the mount point, with spaces and the like escaped as \ooo.
  const points = info
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8))));
  return points.filter((p) => p === root || p.startsWith(root + sep));
}

/** Gives back the owner's access to every directory of the tree (tests chmod some to 000), not following links. */
function restoreAccess(dir: string): void {
  try {
    fs.chmodSync(dir, 0o700);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) restoreAccess(join(dir, entry.name));
  } catch {
    // What cannot be reached stays; the removal below says so.
  }
}

export function removeTree(root: string): void {
  const mounts = mountsUnder(root);
  if (mounts.length > 0) {
    console.warn(`crux tests: left ${root} in place: a test left ${mounts.join(', ')} mounted under it`);
    return;
  }
  try {
    fs.rmSync(root, { recursive: true, force: true });
    return;
  } catch {
    restoreAccess(root);
  }
  try {
    fs.rmSync(root, { recursive: true, force: true });
  } catch (error) {
    console.warn(`crux tests: could not remove ${root}: ${String(error)}`);
  }
}

export default function setup(): () => void {
  // Once a run: vitest runs a global setup for each project (vitest.config.mts), in its one main process.
  if (process.env.CRUX_TEST_TMP_BY === String(process.pid)) return () => {};
  process.env.CRUX_TEST_TMP_BY = String(process.pid);
  const root = fs.mkdtempSync(join(tmpdir(), 'crux-tests-'));
  // Tests run some commands as another user: they must reach their directories through this one.
  fs.chmodSync(root, 0o711);
  process.env.CRUX_TEST_TMP = root;
  return () => removeTree(root);
}
