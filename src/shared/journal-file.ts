// Opening a journal (or a history file): only a regular file. A FIFO in its place would block the open and
// every read forever (past CRUX_LOCK_TIMEOUT), a device would be read as a journal: O_NONBLOCK makes the open
// return at once whatever is there, and fstat refuses anything but a regular file (exit 5, naming it).
import { fs } from './fs';
import { CruxError } from './errors';

const KINDS: [(s: import('node:fs').Stats) => boolean, string][] = [
  [(s) => s.isFIFO(), 'a FIFO'],
  [(s) => s.isCharacterDevice(), 'a character device'],
  [(s) => s.isBlockDevice(), 'a block device'],
  [(s) => s.isSocket(), 'a socket'],
  [(s) => s.isDirectory(), 'a directory'],
];

/** Opens `path` for reading (`r`) or reading and writing (`r+`); errors of the open (ENOENT …) are thrown as they come. */
export function openJournalFile(path: string, mode: 'r' | 'r+' = 'r'): number {
  const c = fs.constants;
  const fd = fs.openSync(path, (mode === 'r' ? c.O_RDONLY : c.O_RDWR) | c.O_NONBLOCK);
  let stat: import('node:fs').Stats;
  try {
    stat = fs.fstatSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (stat.isFile()) return fd;
  fs.closeSync(fd);
  const kind = KINDS.find(([is]) => is(stat))?.[1] ?? 'not a regular file';
  throw new CruxError(
    'invalid_input',
    `not a regular file: ${path} is ${kind}; crux opens only regular files as journals`,
    'nothing was read or changed; move it away: a missing journal is an empty store',
  );
}
