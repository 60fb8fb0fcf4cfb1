// A journal (or history file) as a stream of lines, and a new file written from one: what `journal copy` moves,
// in bounded memory whatever the file's size (a chunk at a time, never the whole file).
import { fs } from '../../shared/fs';
import { dirname } from 'node:path';
import { asStorageError, adoptOwner, FILE_MODE, writeAll } from '../../shared/durable-fs';
import { openJournalFile } from '../../shared/journal-file';

/** Bytes read (and written) per system call. */
export const CHUNK_BYTES = 1 << 20;

/**
 * Every line of the file at `path`, in order, without its `\n` (an unterminated tail last, as it is); nothing
 * for a missing file. Each line is a copy of its own (a consumer may keep it). `chunk` is for tests.
 */
export async function* fileLines(path: string, chunk = CHUNK_BYTES): AsyncIterable<Uint8Array> {
  let fd: number;
  try {
    fd = openJournalFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw asStorageError(error, path);
  }
  try {
    const buf = Buffer.allocUnsafe(chunk);
    // The part of a line read so far, when it spans chunks.
    let carry: Buffer[] = [];
    for (let position = 0; ; ) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, chunk, position);
      } catch (error) {
        throw asStorageError(error, path);
      }
      if (n === 0) break;
      position += n;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1 && nl < n; nl = buf.indexOf(10, start)) {
        const piece = buf.subarray(start, nl);
        yield carry.length === 0 ? Buffer.from(piece) : Buffer.concat([...carry, piece]);
        carry = [];
        start = nl + 1;
      }
      if (start < n) carry.push(Buffer.from(buf.subarray(start, n)));
    }
    if (carry.length > 0) yield Buffer.concat(carry);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes `lines` (each followed by `\n`) to a new file at `path` (0600, the directory's owner), a chunk at a time,
 * and fsyncs it; fails if the file exists. On failure nothing is left at `path`. Returns the bytes written.
 */
export async function writeNewFileFrom(path: string, lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<number> {
  let fd: number;
  try {
    fd = fs.openSync(path, 'wx', FILE_MODE);
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? error : asStorageError(error, path);
  }
  let written = 0;
  try {
    adoptOwner(fd, dirname(path));
    let pending: Uint8Array[] = [];
    let size = 0;
    const flush = () => {
      const joined = Buffer.concat(pending, size);
      writeAll(fd, joined, written);
      written += joined.length;
      pending = [];
      size = 0;
    };
    for await (const line of lines) {
      pending.push(line, NEWLINE);
      size += line.length + 1;
      if (size >= CHUNK_BYTES) flush();
    }
    flush();
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw asStorageError(error, path);
  }
  fs.closeSync(fd);
  return written;
}

const NEWLINE = Buffer.from('\n');
