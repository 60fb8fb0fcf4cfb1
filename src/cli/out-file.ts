// Where `--out <file>` writes, as the shell's `>` does (SPEC §3: crux never replaces what it did not create): an
// existing file, device or FIFO is written into, through a symlink, keeping its owner, mode and hard links
// (`--out /dev/null` run as root leaves /dev/null a device); a path that names nothing yet gets a new 0600 file,
// made whole beside it and renamed into place; `-` and /dev/stdout are standard output.
import { fs } from '../shared/fs';
import { dirname, resolve } from 'node:path';
import { asStorageError } from '../shared/durable-fs';
import { writePrivateFile } from '../journal/dir/key-files';
import { writeStdout } from '../output/stdout';
import { invalid } from '../shared/errors';

export type OutTarget = { readonly kind: 'stdout' } | { readonly kind: 'file'; readonly path: string; readonly shown: string; readonly exists: boolean };

/** Checks `--out` before anything is done (a missing directory, a directory named, no permission to write): exit 5. */
export function resolveOut(raw: string): OutTarget {
  if (raw === '-' || raw === '/dev/stdout') return { kind: 'stdout' };
  const path = resolve(raw);
  let exists = true;
  try {
    fs.lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asStorageError(error, path);
    exists = false;
  }
  const target = exists ? fs.statSync(path, { throwIfNoEntry: false }) : undefined;
  if (target?.isDirectory()) throw invalid(`--out ${raw} is a directory`);
  // What will be made: the path, or the file a dangling symlink names (made when written, as > makes it).
  const made = exists && target === undefined ? resolve(dirname(path), fs.readlinkSync(path)) : exists ? undefined : path;
  const dir = dirname(made ?? path);
  if (made !== undefined && !fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw invalid(`--out ${raw}: no such directory ${dir}`);
  // Permission is asked before anything is done, so that a file crux may not write refuses the command (5) instead
  // of failing after a mint was committed.
  try {
    fs.accessSync(made === undefined ? path : dir, fs.constants.W_OK);
  } catch (error) {
    throw asStorageError(error, made === undefined ? path : dir);
  }
  return { kind: 'file', path, shown: raw, exists };
}

/** Writes `text` where `target` says. */
export function writeOut(target: OutTarget, text: string): void {
  if (target.kind === 'stdout') {
    writeStdout(text);
    return;
  }
  if (!target.exists) {
    writePrivateFile(target.path, text);
    return;
  }
  // What is there stays what it is: opened (through a symlink) and truncated, never replaced by a rename.
  let fd: number;
  try {
    fd = fs.openSync(target.path, fs.constants.O_WRONLY | fs.constants.O_TRUNC | fs.constants.O_CREAT, 0o600);
  } catch (error) {
    throw asStorageError(error, target.path);
  }
  try {
    const bytes = Buffer.from(text);
    for (let offset = 0; offset < bytes.length; ) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
    // A regular file's bytes reach the disk before success is reported; a device or FIFO has nothing to sync.
    if (fs.fstatSync(fd).isFile()) fs.fsyncSync(fd);
  } catch (error) {
    throw asStorageError(error, target.path);
  } finally {
    fs.closeSync(fd);
  }
}
