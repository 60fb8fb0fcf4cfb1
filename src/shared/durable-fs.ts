// The few filesystem moves the journal layer makes durable: private directories, fsynced files, atomic replaces.
import { fs } from './fs';
import { dirname } from 'node:path';
import { CruxError, environmentError } from './errors';

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

/**
 * Whether `path` exists. Unlike fs.existsSync, a path that cannot be looked at (EACCES on a parent) is not
 * "absent": it throws, naming the path (exit 5), so that a store another user owns never looks empty.
 */
export function pathExists(path: string): boolean {
  try {
    fs.statSync(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw asStorageError(error, path);
  }
}

/** Creates `dir` (and missing parents) with mode 0700; fsyncs each parent that gained an entry. */
export function ensurePrivateDir(dir: string): boolean {
  if (pathExists(dir)) return false;
  ensurePrivateDir(dirname(dir));
  try {
    fs.mkdirSync(dir, { mode: DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw asStorageError(error, dir);
  }
  fs.chmodSync(dir, DIR_MODE);
  adoptOwner(dir, dirname(dir));
  fsyncDir(dirname(dir));
  return true;
}

/**
 * Root creating something in a directory another user owns (a cron job's write or repair) gives it to that
 * user, so that the owner is never locked out of their own data directory (SPEC §3). Otherwise does nothing.
 */
export function adoptOwner(target: string | number, dir: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = fs.statSync(dir);
  if (owner.uid === 0 && owner.gid === 0) return;
  if (typeof target === 'number') fs.fchownSync(target, owner.uid, owner.gid);
  else fs.chownSync(target, owner.uid, owner.gid);
}

/** Owner, group and permission bits to give a file (those of the file it replaces). */
export interface Ownership {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

/** The owner, group and mode of `path`, or undefined when it does not exist. */
export function ownershipOf(path: string): Ownership | undefined {
  try {
    const st = fs.statSync(path);
    return { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw asStorageError(error, path);
  }
}

/**
 * Writes `bytes` to a new file at `path` (0600, or `like`'s owner, group and mode) and fsyncs it; fails if
 * the file exists. On failure nothing is left at `path`.
 */
export function writeNewFileDurable(path: string, bytes: Uint8Array | string, opts: { like?: Ownership | undefined } = {}): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'wx', FILE_MODE);
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code === 'EEXIST' ? error : asStorageError(error, path);
  }
  try {
    writeAll(fd, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, 0);
    if (opts.like !== undefined) {
      // A rewrite by root (a cron job's compaction) must not lock the owner out: chown before chmod, which
      // keeps set-id bits from being cleared by the chown.
      const st = fs.fstatSync(fd);
      if (st.uid !== opts.like.uid || st.gid !== opts.like.gid) fs.fchownSync(fd, opts.like.uid, opts.like.gid);
      fs.fchmodSync(fd, opts.like.mode);
    } else adoptOwner(fd, dirname(path));
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

/**
 * Turns a filesystem error into a CruxError naming `path`: permission → 5, full disk or I/O → 75 (never 1);
 * ENOTDIR/EISDIR → 5. Anything else is returned as it is.
 */
export function asStorageError(error: unknown, path: string): unknown {
  if (error instanceof CruxError) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOTDIR' || code === 'EISDIR') {
    return new CruxError('invalid_input', `not usable as a data directory: ${path} (${code})`);
  }
  return environmentError(error, path) ?? error;
}
