// Appending under the lock: quarantine a torn tail, write the new lines in one write, fsync, then acknowledge.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { asStorageError, FILE_MODE, fsyncDir, stampMtime, writeAll } from './durable-fs';
import { quarantineBytes } from './quarantine';
import { crashPoint } from './crash-point';

export interface AppendOutcome {
  readonly bytes: number;
  readonly quarantined?: string;
}

/**
 * Appends `text` (encoded records, each line ending in \n: one batch) to the journal at `path`. `expectedSize` is the size the caller replayed;
 * `tornTail` the unterminated fragment it found. On any failure the file is truncated back to its size
 * before the append, so no partial line is ever left behind.
 */
export function appendRecords(args: {
  root: string;
  file: string;
  path: string;
  text: string;
  ts: string;
  expectedSize: number;
  tornTail?: { offset: number; length: number } | undefined;
}): AppendOutcome {
  const { root, file, path, ts } = args;
  let fd: number;
  let created = false;
  try {
    fd = fs.openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asStorageError(error, path);
    try {
      fd = fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, FILE_MODE);
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
      const tail = Buffer.alloc(args.tornTail.length);
      fs.readSync(fd, tail, 0, tail.length, args.tornTail.offset);
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
      writeAll(fd, buf, size);
      crashPoint('append:before-fsync');
      stampMtime(fd);
      fs.fdatasyncSync(fd);
    } catch (error) {
      // Roll back to the last whole line: a failed append leaves the file as it was.
      try {
        if (created) fs.rmSync(path, { force: true });
        else {
          fs.ftruncateSync(fd, size);
          fs.fsyncSync(fd);
        }
      } catch {
        // The original error is the one to report; the next append quarantines any torn tail.
      }
      throw asStorageError(error, path);
    }
    if (created) fsyncDir(root);
    return { bytes: size + buf.length, ...(quarantined ? { quarantined } : {}) };
  } finally {
    fs.closeSync(fd);
  }
}
