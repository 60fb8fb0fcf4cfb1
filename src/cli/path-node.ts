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

/** Names, in the environment of the Node a command line was handed to, the process that handed it (handTo). */
const HANDED_BY = 'CRUX_HANDED_BY';
/** How often that Node looks whether the process that handed it the line still lives. */
const PARENT_CHECK_MS = 50;

/**
 * Runs this command line on `node` instead (its stdio, environment and exit status, or the signal that ended it),
 * answering false when it could not be started (then this Node runs it). That Node dies with this process
 * (diesWithHander): what a caller started and kills, `kill -9` included, is what writes.
 */
export function handTo(node: string): boolean {
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const child = spawnSync(node, process.argv.slice(1), { stdio: 'inherit', env: { ...process.env, [HANDED_BY]: String(process.pid) } });
  if (child.error !== undefined) return false;
  if (child.signal !== null) {
    process.removeAllListeners(child.signal);
    process.kill(process.pid, child.signal);
  }
  process.exitCode = child.status ?? 1;
  return true;
}

/**
 * In a Node a command line was handed to: ends this process (SIGKILL) as soon as the process that handed it is gone
 * (killed: the caller's process is dead, and no write of its may go on without it). A look every 50 ms, unref'd.
 */
export function diesWithHander(env: NodeJS.ProcessEnv = process.env): void {
  const by = env[HANDED_BY];
  if (by === undefined) return;
  delete env[HANDED_BY];
  const hander = Number(by);
  const gone = () => process.ppid !== hander;
  if (gone()) process.kill(process.pid, 'SIGKILL');
  setInterval(() => {
    if (gone()) process.kill(process.pid, 'SIGKILL');
  }, PARENT_CHECK_MS).unref();
}
