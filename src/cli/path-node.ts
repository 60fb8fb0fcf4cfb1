// bin/crux in a checkout starts the Node that built it by absolute path (build.mjs: bin/pinned/crux.cjs), not
// through `#!/usr/bin/env node`, whose own exec costs every call ~0.6 ms. What it runs on stays what env would have
// chosen: the first `node` on PATH. When that is another Node (a newer one put first on PATH), the command line is
// handed to it here, before anything is read or written. This file is built into bin/crux: node:* only.
import { fs } from '../shared/fs';
import { join } from 'node:path';

type StatOf = (path: string) => { readonly dev: number; readonly ino: number; readonly mode: number; isFile(): boolean } | undefined;

const statOf: StatOf = (path) => {
  try {
    return fs.statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined; // ENOTDIR, EACCES on a directory of PATH: execvp passes over it too
  }
};

/**
 * The `node` that `env node` would run for `path` (PATH's value), when it is not the file `execPath` names; undefined
 * when it is, or when PATH has none (then this Node runs the command, where env would have failed).
 */
export function otherNodeOnPath(path: string | undefined, execPath: string, stat: StatOf = statOf): string | undefined {
  if (path === undefined || path === '') return undefined;
  let self: ReturnType<StatOf> | null = null;
  for (const dir of path.split(':')) {
    // An empty entry is the current directory; ./node, not node, which a spawn would look up on PATH again.
    const candidate = dir === '' ? './node' : join(dir, 'node');
    if (candidate === execPath) return undefined;
    const found = stat(candidate);
    if (found === undefined || !found.isFile() || (found.mode & 0o111) === 0) continue;
    self ??= stat(execPath);
    return self !== undefined && self.dev === found.dev && self.ino === found.ino ? undefined : candidate;
  }
  return undefined;
}

/**
 * Runs this command line on `node` instead (its stdio, environment and exit status, or the signal that ended it),
 * answering false when it could not be started (then this Node runs it).
 */
export function handTo(node: string): boolean {
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const child = spawnSync(node, process.argv.slice(1), { stdio: 'inherit' });
  if (child.error !== undefined) return false;
  if (child.signal !== null) {
    process.removeAllListeners(child.signal);
    process.kill(process.pid, child.signal);
  }
  process.exitCode = child.status ?? 1;
  return true;
}
