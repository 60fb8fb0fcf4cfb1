// The few filesystem moves the journal layer makes durable: private directories, fsynced files, atomic replaces.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { dirname } from 'node:path';
import { CruxError } from '../shared/errors';

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** fsync a directory so that a create or rename in it survives power loss. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } catch (error) {
    // Some platforms cannot fsync a directory; the data itself is already synced.
    if (!['EINVAL', 'EPERM', 'EISDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    fs.closeSync(fd);
  }
}

/** Creates `dir` (and missing parents) with mode 0700; fsyncs each parent that gained an entry. */
export function ensurePrivateDir(dir: string): boolean {
  if (fs.existsSync(dir)) return false;
  ensurePrivateDir(dirname(dir));
  try {
    fs.mkdirSync(dir, { mode: DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw asStorageError(error, dir);
  }
  fs.chmodSync(dir, DIR_MODE);
  fsyncDir(dirname(dir));
  return true;
}

/**
 * Gives a file just written by crux an mtime no other write can produce: the current time with random
 * nanoseconds. The kernel stamps writes with a coarse clock (a few ms per tick), so without this an edit by
 * another program in the same tick as crux's last write would leave the stat unchanged, and the caches that
 * trust an unchanged stat (key index, snapshot) would miss it.
 */
export function stampMtime(fd: number): void {
  const seconds = Math.floor(Date.now() / 1000);
  fs.futimesSync(fd, seconds, seconds + (1 + Math.floor(Math.random() * 999_998)) / 1_000_000);
}

/** Writes `bytes` to a new file at `path` (0600) and fsyncs it; fails if the file exists. */
export function writeNewFileDurable(path: string, bytes: Uint8Array | string, opts: { stamp?: boolean } = {}): void {
  const fd = fs.openSync(path, 'wx', FILE_MODE);
  try {
    writeAll(fd, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, 0);
    if (opts.stamp) stampMtime(fd);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw asStorageError(error, path);
  }
  fs.closeSync(fd);
}

/**
 * Writes the whole buffer at `position`. After a short write it writes the rest, so that a full disk or a
 * file size limit surfaces as its own error (ENOSPC, EFBIG) for the caller to roll back; a write that makes
 * no progress is an error too, never a silent partial line.
 */
export function writeAll(fd: number, buf: Uint8Array, position: number): void {
  let done = 0;
  while (done < buf.length) {
    const written = fs.writeSync(fd, buf, done, buf.length - done, position + done);
    if (written <= 0) {
      const error = new Error(`short write: ${done} of ${buf.length} bytes`) as NodeJS.ErrnoException;
      error.code = 'ENOSPC';
      throw error;
    }
    done += written;
  }
}

const DISK_FULL = new Set(['ENOSPC', 'EFBIG', 'EDQUOT']);

/** Turns a filesystem error into a CruxError with a clear message (full disk → exit 75, not 1). */
export function asStorageError(error: unknown, path: string): unknown {
  if (error instanceof CruxError) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code && DISK_FULL.has(code)) {
    return new CruxError('disk_full', `the disk is full: cannot write ${path} (${code})`, 'free some space and retry; nothing was written');
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new CruxError('invalid_input', `permission denied: ${path} (${code})`, 'check the data directory and its permissions');
  }
  if (code === 'ENOTDIR' || code === 'EISDIR') {
    return new CruxError('invalid_input', `not usable as a data directory: ${path} (${code})`);
  }
  return error;
}
