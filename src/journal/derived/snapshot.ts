// The state snapshot: a store's whole folded state, encoded by the store, in cache/<journal>.state, so that
// whole-store queries (case retrieve) decode it and replay only the records written after it.
//
// File: the 512-byte header (cache-file.ts) naming the store's codec and its version, the journal binding,
// the body's length and its CRC-32; then the body (8-byte aligned). It is used only when the header and the
// whole body verify and the binding holds for a prefix of the journal; the records after that prefix are
// read from the journal and verified as a replay would. Written atomically (temp + rename) by writers and by
// readers that had to replay; a snapshot that fails any check is bypassed (a replay answers) and replaced.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { crc32 } from './checksum';
import { bindingHolds, cachePath, decodeHeader, dropCacheFile, encodeHeader, HEADER_BYTES, isBinding, writeCacheFile, type JournalBinding } from './cache-file';

const SNAPSHOT_KIND = 'crux-snapshot';
const SNAPSHOT_VERSION = 2;

interface SnapshotHeader {
  readonly kind: typeof SNAPSHOT_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  readonly binding: JournalBinding;
  readonly body_bytes: number;
  readonly body_crc: number;
}

export const snapshotName = (file: string) => `${file}.state`;

/** The size of journal the snapshot covers, from its header alone (undefined when none verifies). */
export function snapshotCovers(root: string, file: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(cachePath(root, snapshotName(file)), 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.allocUnsafe(HEADER_BYTES);
    if (fs.readSync(fd, buf, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return undefined;
    const header = decodeHeader<SnapshotHeader>(buf);
    return header?.kind === SNAPSHOT_KIND && header.v === SNAPSHOT_VERSION && isBinding(header.binding) ? header.binding.size : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** The snapshot's body and binding, if it verifies for codec `codec` and describes a prefix of the journal at `journalFd`. */
export function openSnapshot(root: string, file: string, codec: number, journalFd: number, journalSize: number): { binding: JournalBinding; body: Buffer } | undefined {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(cachePath(root, snapshotName(file)));
  } catch {
    return undefined;
  }
  const header = decodeHeader<SnapshotHeader>(bytes);
  if (header?.kind !== SNAPSHOT_KIND || header.v !== SNAPSHOT_VERSION || header.file !== file || header.codec !== codec || !isBinding(header.binding)) return undefined;
  if (bytes.length !== HEADER_BYTES + header.body_bytes) return undefined;
  const body = bytes.subarray(HEADER_BYTES);
  if (crc32(body) !== header.body_crc) return undefined;
  if (!bindingHolds(journalFd, journalSize, header.binding, { prefix: true })) return undefined;
  return { binding: header.binding, body };
}

export function writeSnapshot(root: string, file: string, codec: number, binding: JournalBinding, body: Uint8Array): void {
  const header = encodeHeader({ kind: SNAPSHOT_KIND, v: SNAPSHOT_VERSION, file, codec, binding, body_bytes: body.length, body_crc: crc32(body) });
  if (!writeCacheFile(root, snapshotName(file), [header, body])) dropSnapshot(root, file);
}

export function dropSnapshot(root: string, file: string): void {
  dropCacheFile(root, snapshotName(file));
}
