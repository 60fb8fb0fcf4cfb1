// Over 300 lines: what every derived file shares, in one place — header, binding, body file, atomic writes, the notes
// of files bypassed.
// What every derived file shares: a checksummed header, the binding to the journal state it was derived
// from, and atomic whole-file writes.
//
// Header: the first 512 bytes of the file — a JSON object padded with spaces to 503 bytes, then the CRC-32 of
// those 503 bytes as 8 hex digits, then "\n". A header that does not verify (torn, zeroed, flipped) makes the
// whole file unusable. The binding names the journal's size and its head record (seq, hash, offset, length):
// a derived file holds only while the record at that offset still carries that hash — proof that the
// journal it describes is this one, not a copy of another directory's or a rewrite (compaction, repair).
//
// Only regular files are opened (without following a symlink, without blocking on a FIFO); a cache/ that
// cannot be read or written, or a file there that is not a regular file, is bypassed and noted once
// (takeUnusable): the answer then comes from the journals, as it always could.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { crashPoint } from '../../shared/crash-point';
import { ensurePrivateDir, FILE_MODE } from '../../shared/durable-fs';
import { decodeRecord, VERIFY_ALL, type JournalRecord, type VerifyPolicy } from '../codec/record';
import type { Position } from '../codec/loaded';
import { crc32 } from './checksum';

export const CACHE_DIR = 'cache';
export const HEADER_BYTES = 512;
const JSON_BYTES = 503;

/** The journal state a derived file describes: its size and its last record. */
export interface JournalBinding {
  readonly size: number;
  readonly lines: number;
  readonly seq: number;
  readonly h: string;
  readonly head_offset: number;
  readonly head_length: number;
  /**
   * The journal's mtime (ns) when the file was written. Checked only while the journal has exactly the size
   * bound: a same-size edit by another program is caught by it (a grown journal is continued by its
   * verified tail, whatever its mtime).
   */
  readonly mtime_ns: string;
}

/** The binding of a loaded position: the journal up to its last whole line. */
export function bindingAt(end: Position, mtime_ns: string): JournalBinding {
  return {
    mtime_ns,
    size: end.tornTail?.offset ?? end.bytes,
    lines: end.tornTail ? end.tornTail.line - 1 : end.lines,
    seq: end.head.seq,
    h: end.head.seq === 0 ? '' : end.head.h,
    head_offset: end.headAt?.offset ?? 0,
    head_length: end.headAt?.length ?? 0,
  };
}

/** The journal's mtime in nanoseconds, as a decimal string ('' when it cannot be read). */
export function mtimeOf(journal: number | string): string {
  try {
    return String((typeof journal === 'number' ? fs.fstatSync(journal, { bigint: true }) : fs.statSync(journal, { bigint: true })).mtimeNs);
  } catch {
    return '';
  }
}

export const cachePath = (root: string, name: string) => join(root, CACHE_DIR, name);

/** What could not be used (cache/ or a file in it) and why, not yet told: by path, so each is told once. */
const unusable = new Map<string, { file: string; reason: string }>();
const told = new Set<string>();

/** The derived files found unusable since the last call, each once per process (relative to the data directory). */
export function takeUnusable(): { file: string; reason: string }[] {
  const out = [...unusable.values()];
  unusable.clear();
  return out;
}

function noteUnusable(root: string, name: string | undefined, reason: string): void {
  const file = name === undefined ? CACHE_DIR : `${CACHE_DIR}/${name}`;
  const key = join(root, file);
  if (told.has(key)) return;
  told.add(key);
  unusable.set(key, { file, reason });
}

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * Notes why `name` (or cache/ itself) could not be opened or written. Absent is not a problem, nor a full
 * disk on a write (a cache that cannot be written only costs speed); anything else is told once.
 */
function noteFailure(root: string, name: string | undefined, error: unknown, doing: 'read' | 'written'): void {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT' || (doing === 'written' && code !== undefined && NO_SPACE.has(code))) return;
  const dir = join(root, CACHE_DIR);
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    noteUnusable(root, undefined, 'is not a directory: derived files bypassed');
    return;
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    let dirUsable = true;
    try {
      fs.accessSync(dir, doing === 'read' ? fs.constants.R_OK | fs.constants.X_OK : fs.constants.W_OK | fs.constants.X_OK);
    } catch {
      dirUsable = false;
    }
    if (!dirUsable || name === undefined) {
      noteUnusable(root, undefined, `cannot be ${doing} (${code}): derived files bypassed`);
      return;
    }
  }
  noteUnusable(root, name, `cannot be ${doing} (${code ?? (error instanceof Error ? error.message : String(error))}): bypassed`);
}

/**
 * Opens a derived file for reading (or, with 'r+', appending): only a regular file, never through a symlink,
 * never waiting on a FIFO. undefined when it is absent or cannot be used (noted).
 */
export function openCacheFile(root: string, name: string, mode: 'r' | 'r+' = 'r'): number | undefined {
  const c = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(cachePath(root, name), (mode === 'r' ? c.O_RDONLY : c.O_RDWR) | c.O_NONBLOCK | c.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') noteUnusable(root, name, 'is a symbolic link: bypassed');
    else noteFailure(root, name, error, 'read');
    return undefined;
  }
  let kind: string | undefined;
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) kind = st.isFIFO() ? 'a FIFO' : st.isDirectory() ? 'a directory' : st.isSocket() ? 'a socket' : 'a device';
  } catch (error) {
    fs.closeSync(fd);
    noteFailure(root, name, error, 'read');
    return undefined;
  }
  if (kind === undefined) return fd;
  fs.closeSync(fd);
  noteUnusable(root, name, `is ${kind}, not a regular file: bypassed`);
  return undefined;
}

/** Whether a derived file is there to be read (a regular file in a readable cache/), for `crux doctor`. */
export function cacheFileState(root: string, name: string): 'absent' | 'usable' | 'unusable' {
  const fd = openCacheFile(root, name);
  if (fd !== undefined) {
    fs.closeSync(fd);
    return 'usable';
  }
  try {
    fs.lstatSync(cachePath(root, name));
    return 'unusable';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unusable';
  }
}

/** Notes a failure of the derived layer that is not a file's (a bug): told, never a reason to fail a command. */
export function noteInternal(root: string, what: string, error: unknown): void {
  noteUnusable(root, undefined, `${what} failed (${error instanceof Error ? error.message : String(error)}): derived files bypassed`);
}

export function encodeHeader(fields: object): Buffer {
  const json = JSON.stringify(fields);
  if (Buffer.byteLength(json) > JSON_BYTES) throw new RangeError('cache header too long');
  const out = Buffer.alloc(HEADER_BYTES, 0x20);
  out.write(json, 0, 'utf8');
  out.write(crc32(out.subarray(0, JSON_BYTES)).toString(16).padStart(8, '0'), JSON_BYTES, 'latin1');
  out[HEADER_BYTES - 1] = 10;
  return out;
}

/** The header's fields, or undefined when the bytes are not a header that verifies. */
export function decodeHeader<H>(bytes: Uint8Array): H | undefined {
  if (bytes.length < HEADER_BYTES || bytes[HEADER_BYTES - 1] !== 10) return undefined;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const stored = buf.toString('latin1', JSON_BYTES, JSON_BYTES + 8);
  if (!/^[0-9a-f]{8}$/.test(stored) || parseInt(stored, 16) !== crc32(new Uint8Array(buf.buffer, buf.byteOffset, JSON_BYTES))) return undefined;
  try {
    const value = JSON.parse(buf.toString('utf8', 0, JSON_BYTES));
    return value !== null && typeof value === 'object' ? (value as H) : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the header of an open derived file. */
export function readHeader<H>(fd: number): H | undefined {
  const buf = Buffer.allocUnsafe(HEADER_BYTES);
  try {
    if (fs.readSync(fd, buf, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return undefined;
  } catch {
    return undefined;
  }
  return decodeHeader<H>(buf);
}

/** A header and a body it checksums (`body_bytes`, `body_crc`: seeded with `seed`): the manifest, a delta, a build file. */
export function writeBodyFile(root: string, name: string, fields: object, body: Uint8Array, seed = 0): boolean {
  return writeCacheFile(root, name, [encodeHeader({ ...fields, body_bytes: body.length, body_crc: crc32(body, seed) }), body]);
}

/** A file writeBodyFile wrote, if `accept` takes its header and its body (at most `maxBytes`) verifies. */
export function readBodyFile<H extends object>(
  root: string,
  name: string,
  accept: (header: H) => boolean,
  seed: (header: H) => number,
  maxBytes: number,
): { header: H; body: Buffer } | undefined {
  const fd = openCacheFile(root, name);
  if (fd === undefined) return undefined;
  try {
    const header = readHeader<H & { body_bytes: number; body_crc: number }>(fd);
    if (header === undefined || !accept(header)) return undefined;
    const size = header.body_bytes;
    if (!Number.isSafeInteger(size) || size < 0 || size > maxBytes || fs.fstatSync(fd).size !== HEADER_BYTES + size) return undefined;
    const body = Buffer.allocUnsafe(size);
    if (fs.readSync(fd, body, 0, size, HEADER_BYTES) !== size || crc32(body, seed(header)) !== header.body_crc) return undefined;
    return { header, body };
  } catch {
    // An I/O error reading a cache file: bypassed, as a file that does not verify is.
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

export function isBinding(b: unknown): b is JournalBinding {
  const x = b as JournalBinding;
  return (
    x !== null &&
    typeof x === 'object' &&
    Number.isSafeInteger(x.size) &&
    x.size >= 0 &&
    Number.isSafeInteger(x.lines) &&
    x.lines >= 0 &&
    Number.isSafeInteger(x.seq) &&
    x.seq >= 0 &&
    typeof x.h === 'string' &&
    Number.isSafeInteger(x.head_offset) &&
    Number.isSafeInteger(x.head_length) &&
    typeof x.mtime_ns === 'string'
  );
}

/**
 * Whether the journal open at `fd` (of `size` bytes) is the one `b` describes, or (with `prefix`) begins with
 * it: the record at the binding's head offset must verify and carry its seq and hash, and end where the
 * binding says the journal ends. One positioned read and one hash.
 */
export function bindingHolds(fd: number, size: number, b: JournalBinding, opts: { prefix?: boolean } = {}): boolean {
  if (!isBinding(b)) return false;
  if (opts.prefix ? b.size > size : b.size !== size) return false;
  if (b.size === size && b.mtime_ns !== mtimeOf(fd)) return false;
  if (b.seq === 0) return b.size === 0;
  if (b.head_offset + b.head_length + 1 !== b.size) return false;
  const head = readVerified(fd, { offset: b.head_offset, length: b.head_length });
  return head !== undefined && head.seq === b.seq && head.h === b.h;
}

/**
 * The line at `at` of the journal open at `fd`, verified as a replay would (its own hash, its fields), or
 * undefined: a derived file only says where to look. (TRUST_VOUCHED: a line this process verified moments
 * ago through the same descriptor, a rebuild's second look.)
 */
export function readVerified(
  fd: number,
  at: { readonly offset: number; readonly length: number },
  policy: VerifyPolicy = VERIFY_ALL,
): JournalRecord | undefined {
  const buf = Buffer.allocUnsafe(at.length + 1);
  try {
    if (fs.readSync(fd, buf, 0, buf.length, at.offset) !== buf.length || buf[at.length] !== 10) return undefined;
  } catch {
    return undefined;
  }
  const decoded = decodeRecord(buf.toString('utf8', 0, at.length), policy);
  return decoded.ok ? decoded.record : undefined;
}

/**
 * Writes a whole derived file atomically: a temp file in cache/, then rename. A reader sees the old file or
 * the new one, never a mix; a crash leaves a stray temp or nothing (a snapshot's, the large one, is swept by the
 * next streamed build: snapshot-stream.ts). Not fsynced: every byte is checksummed, so a file that did not reach
 * the disk is recognised and rebuilt. Returns false when it could not be written (a full disk): a cache that
 * cannot be written only costs speed.
 */
export function writeCacheFile(root: string, name: string, parts: readonly Uint8Array[]): boolean {
  return writeCacheFileBy(root, name, (fd) => {
    let at = 0;
    for (const part of parts) {
      writeFully(fd, part, at);
      at += part.length;
    }
  });
}

/** writeCacheFile, its bytes written (and maybe read back) by `write`; an error without a code (not the disk's) is thrown. */
export function writeCacheFileBy(root: string, name: string, write: (fd: number) => void): boolean {
  const path = cachePath(root, name);
  const temp = `${path}.${process.pid}.${Math.floor(Math.random() * 1e9)}.tmp`;
  let fd: number | undefined;
  try {
    ensurePrivateDir(join(root, CACHE_DIR));
    fd = fs.openSync(temp, 'wx+', FILE_MODE);
    write(fd);
    fs.closeSync(fd);
    fd = undefined;
    crashPoint('derived:before-rename');
    fs.renameSync(temp, path);
    return true;
  } catch (error) {
    try {
      if (fd !== undefined) fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
    } catch {
      // cache/ is not a directory, or cannot be written: there is no temp file to remove.
    }
    if ((error as NodeJS.ErrnoException).code === undefined) throw error;
    noteFailure(root, name, error, 'written');
    return false;
  }
}

/** Writes all of `buf` at `position`; a write that makes no progress is an error (a full disk). */
export function writeFully(fd: number, buf: Uint8Array, position: number): void {
  for (let done = 0; done < buf.length; ) {
    const n = fs.writeSync(fd, buf, done, buf.length - done, position + done);
    if (n <= 0) throw Object.assign(new Error('short write'), { code: 'ENOSPC' });
    done += n;
  }
}

/** The files in cache/ named `prefix` and then `rest`, not modified in the last `minAgeMs` (any age for 0). */
export function oldCacheFiles(root: string, prefix: string, rest: RegExp, minAgeMs: number): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, CACHE_DIR));
  } catch {
    return [];
  }
  const now = Date.now();
  return names.filter((name) => {
    if (!name.startsWith(prefix) || !rest.test(name.slice(prefix.length))) return false;
    try {
      return minAgeMs <= 0 || now - fs.lstatSync(cachePath(root, name)).mtimeMs >= minAgeMs;
    } catch {
      return false;
    }
  });
}

export function dropCacheFile(root: string, name: string): void {
  try {
    fs.rmSync(cachePath(root, name), { force: true });
  } catch {
    // A cache that cannot be removed is still verified before use.
  }
}

/** A random 32-bit nonce for a new derived file: it seeds the file's page and block checksums. */
export const newNonce = () => (Math.random() * 0x1_0000_0000) >>> 0;
