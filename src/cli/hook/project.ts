// The project a hook's session runs in (SPEC §10.2): the name of the git repository's root directory that
// `cwd` is in (a `.git` directory, or a worktree's `.git` file), else the name of `cwd` itself.
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { fs } from '../../shared/fs';

/** A walk up stops here: deeper than any real checkout, and bounded for a path that loops. */
const MAX_LEVELS = 64;

export function projectOf(cwd: string | null): string | null {
  if (cwd === null || cwd.trim() === '') return null;
  const start = isAbsolute(cwd) ? resolve(cwd) : cwd;
  let dir = start;
  for (let level = 0; level < MAX_LEVELS && isAbsolute(dir); level++) {
    if (fs.existsSync(`${dir === '/' ? '' : dir}/.git`)) return basename(dir) || null;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return basename(start) || null;
}
