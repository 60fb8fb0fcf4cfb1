// The root of the project a directory is in: the nearest directory up from it with a `.git` (a repository, a
// worktree or a submodule), else the directory itself. Found by looking, not by running git (a start-up cost).
import { fs } from '../../shared/fs';
import { dirname, join, resolve } from 'node:path';

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
