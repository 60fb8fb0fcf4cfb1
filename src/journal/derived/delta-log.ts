// The delta of an index: what writers added since its base, appended as blocks, never rewritten in place.
//
// File: the 512-byte header (naming the base it extends by the base's nonce), then blocks:
//   "CXLB" · entry count u32 · meta length u32 · meta (JSON, space-padded to a multiple of 4) · entries ·
//   CRC-32 (u32) of everything before it in the block, seeded with the log's nonce and the block's offset.
// Each block's meta names the journal state after it (its binding) and the live-bytes estimate. A block
// that is short, torn or does not verify ends the log there: a short write on a full disk, a crash before
// the page cache reached the disk, a flipped bit — the index then covers less of the journal, and the rest
// is read from the journal itself. A writer cuts such a tail off before it appends (it is crux's own cache).
import { fs } from '../../shared/fs';
import { crashPoint } from '../crash-point';
import { crc32, expectChecksumBytes, seedOf } from './checksum';
import { decodeHeader, encodeHeader, HEADER_BYTES, isBinding, openCacheFile, writeFully, type JournalBinding } from './cache-file';
import { ENTRY_BYTES, ENTRY_WORDS, EntryList } from './entries';

const MAGIC = 0x424c5843; // "CXLB"
const LOG_KIND = 'crux-index-log';

export interface LogHeader {
  readonly kind: typeof LOG_KIND;
  readonly v: number;
  readonly nonce: number;
  /** The nonce of the base this log extends. */
  readonly base: number;
}

export interface BlockMeta {
  readonly binding: JournalBinding;
  readonly live: number;
}

export interface OpenLog {
  readonly header: LogHeader;
  readonly entries: EntryList;
  /** The last verified block's meta, if any block verified. */
  readonly last: BlockMeta | undefined;
  /** Where the verified blocks end (a writer appends there). */
  readonly end: number;
  readonly blocks: number;
}

export function encodeLogHeader(header: LogHeader): Buffer {
  return encodeHeader(header);
}

export function encodeBlock(nonce: number, at: number, entries: Uint32Array, meta: BlockMeta): Buffer {
  let metaText = JSON.stringify(meta);
  metaText = metaText.padEnd(Math.ceil(Buffer.byteLength(metaText) / 4) * 4);
  const metaBytes = Buffer.from(metaText);
  // Plain views and a DataView, as parseLog reads it: a writer appends a block on every put.
  const out = Buffer.alloc(12 + metaBytes.length + entries.byteLength + 4);
  const view = new DataView(out.buffer, out.byteOffset, out.length);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, entries.length / ENTRY_WORDS, true);
  view.setUint32(8, metaBytes.length, true);
  out.set(metaBytes, 12);
  out.set(new Uint8Array(entries.buffer, entries.byteOffset, entries.byteLength), 12 + metaBytes.length);
  view.setUint32(out.length - 4, crc32(new Uint8Array(out.buffer, out.byteOffset, out.length - 4), seedOf(nonce, at)), true);
  return out;
}

/**
 * Parses a log's bytes: the header and every block up to the first that does not verify. Only the last
 * verified block's meta is decoded (the log's state is its last block's; earlier metas are covered by their
 * blocks' checksums), and the entries are copied once, into one list.
 */
export function parseLog(bytes: Buffer, version: number): OpenLog | undefined {
  const header = decodeHeader<LogHeader>(bytes);
  if (header?.kind !== LOG_KIND || header.v !== version || !Number.isInteger(header.nonce) || !Number.isInteger(header.base)) return undefined;
  const blocks: { at: number; count: number; metaLength: number; size: number }[] = [];
  expectChecksumBytes(bytes.length);
  // A log holds up to thousands of blocks, each read by every command that opens the index: through a DataView
  // and plain views (V8's own methods), not Buffer's readUInt32LE and subarray (JS, cold in a short command:
  // ~25 k instructions a block, 6 M at a few hundred puts).
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  let at = HEADER_BYTES;
  while (at + 16 <= bytes.length) {
    if (view.getUint32(at, true) !== MAGIC) break;
    const count = view.getUint32(at + 4, true);
    const metaLength = view.getUint32(at + 8, true);
    const size = 12 + metaLength + count * ENTRY_BYTES + 4;
    if (metaLength % 4 !== 0 || at + size > bytes.length) break;
    const body = new Uint8Array(bytes.buffer, bytes.byteOffset + at, size - 4);
    if (view.getUint32(at + size - 4, true) !== crc32(body, seedOf(header.nonce, at))) break;
    blocks.push({ at, count, metaLength, size });
    at += size;
  }
  // A last block whose meta is not ours ends the log before it.
  let last: BlockMeta | undefined;
  while (blocks.length > 0 && (last = metaOf(bytes, blocks.at(-1)!)) === undefined) blocks.pop();
  const total = blocks.reduce((sum, b) => sum + b.count, 0);
  const words = new Uint32Array(total * ENTRY_WORDS);
  const into = new Uint8Array(words.buffer);
  let filled = 0;
  for (const b of blocks) {
    into.set(new Uint8Array(bytes.buffer, bytes.byteOffset + b.at + 12 + b.metaLength, b.count * ENTRY_BYTES), filled);
    filled += b.count * ENTRY_BYTES;
  }
  const end = blocks.length === 0 ? HEADER_BYTES : blocks.at(-1)!.at + blocks.at(-1)!.size;
  return { header, entries: EntryList.of(words), last, end, blocks: blocks.length };
}

function metaOf(bytes: Buffer, block: { at: number; metaLength: number }): BlockMeta | undefined {
  let meta: BlockMeta;
  try {
    meta = JSON.parse(bytes.toString('utf8', block.at + 12, block.at + 12 + block.metaLength));
  } catch {
    return undefined;
  }
  return isBinding(meta?.binding) && typeof meta.live === 'number' ? meta : undefined;
}

export function readLog(root: string, name: string, version: number, maxBytes: number): OpenLog | undefined {
  let bytes: Buffer;
  const fd = openCacheFile(root, name);
  if (fd === undefined) return undefined;
  try {
    const size = fs.fstatSync(fd).size;
    if (size > maxBytes) return undefined;
    bytes = Buffer.allocUnsafe(size);
    if (fs.readSync(fd, bytes, 0, size, 0) !== size) return undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
  return parseLog(bytes, version);
}

/**
 * Appends one block at `end` (cutting off whatever unverified bytes follow it). Throws on failure: the caller
 * removes the log, so that no reader trusts a half-written one (it would not verify anyway).
 */
export function appendBlock(root: string, name: string, nonce: number, end: number, entries: Uint32Array, meta: BlockMeta): number {
  const fd = openCacheFile(root, name, 'r+');
  if (fd === undefined) throw new Error(`${name} cannot be appended to`);
  try {
    const block = encodeBlock(nonce, end, entries, meta);
    if (fs.fstatSync(fd).size !== end) fs.ftruncateSync(fd, end);
    // A crash here leaves half a block: it does not verify, and the log ends before it.
    const half = block.length >> 1;
    writeFully(fd, block.subarray(0, half), end);
    crashPoint('derived:mid-block');
    writeFully(fd, block.subarray(half), end + half);
    return end + block.length;
  } finally {
    fs.closeSync(fd);
  }
}
