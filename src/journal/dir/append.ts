// Appending under the lock: quarantine a torn tail, write the new lines in one write, fsync, then acknowledge.
import { fs } from '../../shared/fs';
import { adoptOwner, asStorageError, FILE_MODE, fsyncDir, writeAll } from '../../shared/durable-fs';
import { quarantineBytes } from './quarantine';
import { crashPoint, tornWriteForTest } from '../../shared/crash-point';
import { openJournalFile } from '../../shared/journal-file';

/**
 * Appends `text` (encoded records, each line ending in \n: one batch) to the journal at `path`. `expectedSize` is the size the caller replayed;
 * `tornTail` the unterminated fragment it found. On any failure the file is truncated back to its size
 * before the append, so no partial line is ever left behind, unless the bytes past that size are not this
 * append's own (see rollBack). Returns where the torn tail went in quarantine/, if there was one.
 */
export function appendRecords(args: {
  root: string;
  file: string;
  path: string;
  text: string;
  ts: string;
  expectedSize: number;
  tornTail?: { offset: number; length: number } | undefined;
}): string | undefined {
  const { root, file, path, ts } = args;
  let fd: number;
  let created = false;
  try {
    fd = openJournalFile(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asStorageError(error, path);
    try {
      fd = fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, FILE_MODE);
      adoptOwner(fd, root);
    } catch (createError) {
      throw asStorageError(createError, path);
    }
    created = true;
  }
  try {
    let size = fs.fstatSync(fd).size;
    if (size !== args.expectedSize) {
      throw new Error(`${file} changed under the lock (${args.expectedSize} → ${size} bytes): is another program writing it?`);
    }
    let quarantined: string | undefined;
    if (args.tornTail !== undefined) {
      const tail = readAt(fd, args.tornTail.offset, args.tornTail.length);
      try {
        quarantined = quarantineBytes(root, file, `tail-at-${args.tornTail.offset}`, tail, ts);
      } catch (error) {
        throw asStorageError(error, path);
      }
      crashPoint('append:after-quarantine');
      fs.ftruncateSync(fd, args.tornTail.offset);
      fs.fsyncSync(fd);
      size = args.tornTail.offset;
    }
    const buf = Buffer.from(args.text);
    try {
      crashPoint('append:before-write');
      tornWriteForTest(fd, buf, size);
      writeAll(fd, buf, size);
      crashPoint('append:before-fsync');
      fs.fdatasyncSync(fd);
    } catch (error) {
      // Roll back to the last whole line: a failed append leaves the file as it was.
      let left: string | undefined;
      try {
        left = rollBack(fd, path, created, size, buf);
      } catch {
        // The original error is the one to report; the next append quarantines any torn tail.
      }
      const storage = asStorageError(error, path);
      if (left !== undefined && storage instanceof Error) storage.message += ` (${left})`;
      throw storage;
    }
    if (created) fsyncDir(root);
    return quarantined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Takes back the bytes a failed append wrote past `size`, and only those: if the file is not `size` bytes
 * followed by a prefix of `buf` (another writer got in, which the lock should have prevented), nothing is cut
 * and the reason is returned, so that no other writer's acknowledged line is ever truncated.
 */
export function rollBack(fd: number, path: string, created: boolean, size: number, buf: Buffer): string | undefined {
  const now = fs.fstatSync(fd).size;
  const extra = now - size;
  const mine = extra >= 0 && extra <= buf.length && (extra === 0 || readAt(fd, size, extra).equals(buf.subarray(0, extra)));
  if (!mine) return `left the file as it is: its ${now} bytes are not the ${size} bytes before this write followed by this write's own`;
  if (created && size === 0) fs.rmSync(path, { force: true });
  else if (extra > 0) {
    fs.ftruncateSync(fd, size);
    fs.fsyncSync(fd);
  }
  return undefined;
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  fs.readSync(fd, out, 0, length, offset);
  return out;
}
