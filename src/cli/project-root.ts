// The root of the project a directory is in: the nearest directory up from it with a `.git` (a repository, a
// worktree or a submodule), else the directory itself. Found by looking, not by running git (a start-up cost).
import { fs } from '../shared/fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

export function projectRootOf(dir: string): string {
  const start = resolve(dir);
  for (let current = start; ; current = dirname(current)) {
    try {
      fs.statSync(join(current, '.git'));
      return current;
    } catch {
      // Not here (or not readable): look one level up.
    }
    if (dirname(current) === current) return start;
  }
}

/**
 * The project a hook's session runs in (SPEC §10.2): the name of the root of the repository `cwd` is in, else
 * the name of `cwd` itself (a relative one, which names no place crux can look at, as it is).
 */
export function projectOf(cwd: string | null): string | null {
  if (cwd === null || cwd.trim() === '') return null;
  return basename(isAbsolute(cwd) ? projectRootOf(cwd) : cwd) || null;
}
