// The snapshot's delta: a store's changes since its snapshot (the records written after it, folded), in the
// store's own encoding, in cache/<journal>.state-delta, so that readers after many single writes apply them
// at once instead of verifying, decoding and folding every record after the snapshot on each call.
//
// File: the 512-byte header (cache-file.ts) naming the store's codec and its version, the snapshot it
// continues (by the snapshot's nonce), the binding (the journal state the delta reaches), and the body's
// length and CRC-32 (seeded with that nonce); then the body, read whole and verified. It is used only with
// that snapshot and only while its binding holds for a prefix of the journal; the records after it are read
// from the journal and verified as a replay would. Written whole (temp + rename) by readers that folded
// DELTA_AFTER_RECORDS records or more past the snapshot and its delta; anything that does not verify is
// bypassed (those records are folded from the journal again) and replaced.
import { fs } from '../../shared/fs';
import { crc32, seedOf } from './checksum';
import {
  bindingHolds,
  dropCacheFile,
  encodeHeader,
  HEADER_BYTES,
  isBinding,
  openCacheFile,
  readHeader,
  writeCacheFile,
  type JournalBinding,
} from './cache-file';

const DELTA_KIND = 'crux-snapshot-delta';
const DELTA_VERSION = 1;
/** A bigger delta is not read: the snapshot is rewritten long before one grows that far (snapshot-load.ts). */
const DELTA_MAX_BYTES = 64 * 1024 * 1024;

interface DeltaHeader {
  readonly kind: typeof DELTA_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  /** The nonce of the snapshot this delta continues. */
  readonly base: number;
  readonly binding: JournalBinding;
  readonly body_bytes: number;
  readonly body_crc: number;
}

export const deltaName = (file: string) => `${file}.state-delta`;
const bodySeed = (base: number) => seedOf(base, -1);

/**
 * The delta continuing the snapshot of nonce `base` (codec `codec`), if it verifies and its binding holds for
 * a prefix of the journal open at `journalFd` (of size `journalSize`); undefined otherwise.
 */
export function readDelta(
  root: string,
  file: string,
  codec: number,
  base: number,
  journalFd: number,
  journalSize: number,
): { binding: JournalBinding; body: Buffer } | undefined {
  const fd = openCacheFile(root, deltaName(file));
  if (fd === undefined) return undefined;
  try {
    const header = readHeader<DeltaHeader>(fd);
    if (header?.kind !== DELTA_KIND || header.v !== DELTA_VERSION || header.file !== file || header.codec !== codec || header.base !== base) return undefined;
    const bytes = header.body_bytes;
    if (!isBinding(header.binding) || !Number.isSafeInteger(bytes) || bytes < 0 || bytes > DELTA_MAX_BYTES) return undefined;
    if (fs.fstatSync(fd).size !== HEADER_BYTES + bytes) return undefined;
    const body = Buffer.allocUnsafe(bytes);
    if (fs.readSync(fd, body, 0, bytes, HEADER_BYTES) !== bytes || crc32(body, bodySeed(base)) !== header.body_crc) return undefined;
    if (!bindingHolds(journalFd, journalSize, header.binding, { prefix: true })) return undefined;
    return { binding: header.binding, body };
  } catch {
    // An I/O error reading a cache file: bypassed, as a file that does not verify is.
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

export function writeDelta(root: string, file: string, codec: number, base: number, binding: JournalBinding, body: Uint8Array): void {
  const header = encodeHeader({
    kind: DELTA_KIND,
    v: DELTA_VERSION,
    file,
    codec,
    base,
    binding,
    body_bytes: body.length,
    body_crc: crc32(body, bodySeed(base)),
  });
  if (!writeCacheFile(root, deltaName(file), [header, body])) dropDelta(root, file);
}

export function dropDelta(root: string, file: string): void {
  dropCacheFile(root, deltaName(file));
}
