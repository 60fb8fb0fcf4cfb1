// The delta of an index: what writers added since its base, appended as blocks, never rewritten in place.
//
// File: the 512-byte header (naming the base it extends by the base's nonce), then blocks:
//   "CXLB" · its own offset u32 · entry count u32 · meta length u32 · meta (JSON, space-padded to a multiple of 4) ·
//   entries · CRC-32 of every byte from the first block to here, seeded with the log's nonce, stored masked with it.
// Each block's meta names the journal state after it (its binding) and the live-bytes estimate. The checksums run
// on from block to block, so a reader verifies the whole log with one pass over its bytes (a log holds hundreds of
// blocks, and every command that opens the index reads it). The mask keeps them running: a CRC continued over its
// own value comes to a constant (the residue), which would start every block afresh; masked with a value of this
// log's, each block's checksum depends on this log's nonce, and its offset, which it carries, on where it lies.
// So a block moved, dropped or copied from another log does not verify. A block that is short, torn or does not
// verify ends the log there: a short write on a full disk, a crash before the page cache reached the disk, a
// flipped bit — the index then covers less of the journal, and the rest is read from the journal itself. A
// writer cuts such a tail off before it appends (it is crux's own cache).
import { fs } from '../../shared/fs';
import { crashPoint } from '../../shared/crash-point';
import { crc32, expectChecksumBytes, seedOf } from './checksum';
import { decodeHeader, encodeHeader, HEADER_BYTES, isBinding, openCacheFile, writeFully, type JournalBinding } from './cache-file';
import { ENTRY_BYTES, ENTRY_WORDS, EntryList } from './entries';

const MAGIC = 0x424c5843; // "CXLB"
const LOG_KIND = 'crux-index-log';
/**
 * The log's own format version (its header's `v`), apart from the base's: 6 chained the blocks' checksums. A log of
 * another version is not read, and the journal past the base is read instead until a writer starts a new log.
 */
export const LOG_VERSION = 6;

/** The block frame before the meta: magic, offset, entry count, meta length. */
const FRAME = 16;

/** Where a log's checksums start: a seed of its nonce and the first block's offset. */
export const chainStart = (nonce: number) => seedOf(nonce, HEADER_BYTES);
/** What a log's checksums are stored masked with (nonzero: see the top of this file). */
const maskOf = (nonce: number) => seedOf(nonce, 0) | 1;

/** The running checksum past a block's trailer, from the checksum `sum` before it (the trailer holds it masked). */
const chainAfter = (bytes: Uint8Array, trailerAt: number, sum: number) => crc32(bytes.subarray(trailerAt, trailerAt + 4), sum);

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
  /** The running checksum past the last verified block (a writer's next block runs on from it). */
  readonly chain: number;
  readonly blocks: number;
}

export function encodeLogHeader(header: LogHeader): Buffer {
  return encodeHeader(header);
}

/**
 * The block at offset `at` of the log with nonce `nonce`, whose checksum runs on from `chain` (chainStart for a
 * log's first block; OpenLog.chain after).
 */
export function encodeBlock(nonce: number, at: number, chain: number, entries: Uint32Array, meta: BlockMeta): Buffer {
  let metaText = JSON.stringify(meta);
  metaText = metaText.padEnd(Math.ceil(Buffer.byteLength(metaText) / 4) * 4);
  const metaBytes = Buffer.from(metaText);
  // Plain views and a DataView, as parseLog reads it: a writer appends a block on every put.
  const out = Buffer.alloc(FRAME + metaBytes.length + entries.byteLength + 4);
  const view = new DataView(out.buffer, out.byteOffset, out.length);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, at, true);
  view.setUint32(8, entries.length / ENTRY_WORDS, true);
  view.setUint32(12, metaBytes.length, true);
  out.set(metaBytes, FRAME);
  out.set(new Uint8Array(entries.buffer, entries.byteOffset, entries.byteLength), FRAME + metaBytes.length);
  const sum = crc32(new Uint8Array(out.buffer, out.byteOffset, out.length - 4), chain);
  view.setUint32(out.length - 4, (sum ^ maskOf(nonce)) >>> 0, true);
  return out;
}

interface Block {
  readonly at: number;
  readonly count: number;
  readonly metaLength: number;
  readonly size: number;
}

/**
 * Parses a log's bytes: the header and every block up to the first that does not verify. Only the last
 * verified block's meta is decoded (the log's state is its last block's; earlier metas are covered by the
 * checksums), and the entries are copied once, into one list.
 */
export function parseLog(bytes: Buffer, version: number): OpenLog | undefined {
  const header = decodeHeader<LogHeader>(bytes);
  if (header?.kind !== LOG_KIND || header.v !== version || !Number.isInteger(header.nonce) || !Number.isInteger(header.base)) return undefined;
  // A log holds up to thousands of blocks, each read by every command that opens the index: their frames through a
  // DataView (V8's own methods, not Buffer's readUInt32LE and subarray, JS cold in a short command), and their
  // checksums in one pass over the bytes where the last one holds (one native call, not one a block).
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const framed: Block[] = [];
  let at = HEADER_BYTES;
  while (at + FRAME + 4 <= bytes.length) {
    if (view.getUint32(at, true) !== MAGIC || view.getUint32(at + 4, true) !== at) break;
    const count = view.getUint32(at + 8, true);
    const metaLength = view.getUint32(at + 12, true);
    const size = FRAME + metaLength + count * ENTRY_BYTES + 4;
    if (metaLength % 4 !== 0 || at + size > bytes.length) break;
    framed.push({ at, count, metaLength, size });
    at += size;
  }
  const start = chainStart(header.nonce);
  const mask = maskOf(header.nonce);
  const verified = lastHolds(bytes, view, framed, start, mask) ? framed : verifiedPrefix(bytes, view, framed, start, mask);
  // A last block whose meta is not ours ends the log before it.
  let last: BlockMeta | undefined;
  while (verified.length > 0 && (last = metaOf(bytes, verified.at(-1)!)) === undefined) verified.pop();
  const total = verified.reduce((sum, b) => sum + b.count, 0);
  const words = new Uint32Array(total * ENTRY_WORDS);
  const into = new Uint8Array(words.buffer);
  let filled = 0;
  for (const b of verified) {
    into.set(new Uint8Array(bytes.buffer, bytes.byteOffset + b.at + FRAME + b.metaLength, b.count * ENTRY_BYTES), filled);
    filled += b.count * ENTRY_BYTES;
  }
  const end = verified.length === 0 ? HEADER_BYTES : verified.at(-1)!.at + verified.at(-1)!.size;
  const chain = end === HEADER_BYTES ? start : chainAfter(bytes, end - 4, (view.getUint32(end - 4, true) ^ mask) >>> 0);
  return { header, entries: EntryList.of(words), last, end, chain, blocks: verified.length };
}

/**
 * Whether the last framed block's checksum, over every byte from the first block, holds. Then every block's does:
 * a block whose bytes changed leaves the running checksum wrong from there on.
 */
function lastHolds(bytes: Buffer, view: DataView, framed: readonly Block[], start: number, mask: number): boolean {
  if (framed.length === 0) return true;
  expectChecksumBytes(bytes.length);
  const trailer = framed.at(-1)!.at + framed.at(-1)!.size - 4;
  const sum = crc32(new Uint8Array(bytes.buffer, bytes.byteOffset + HEADER_BYTES, trailer - HEADER_BYTES), start);
  return (sum ^ mask) >>> 0 === view.getUint32(trailer, true);
}

/** The blocks before the first whose checksum does not hold, block by block (after damage: rare). */
function verifiedPrefix(bytes: Buffer, view: DataView, framed: readonly Block[], start: number, mask: number): Block[] {
  const verified: Block[] = [];
  let chain = start;
  for (const b of framed) {
    const trailer = b.at + b.size - 4;
    const sum = crc32(new Uint8Array(bytes.buffer, bytes.byteOffset + b.at, b.size - 4), chain);
    if ((sum ^ mask) >>> 0 !== view.getUint32(trailer, true)) break;
    verified.push(b);
    chain = chainAfter(bytes, trailer, sum);
  }
  return verified;
}

function metaOf(bytes: Buffer, block: { at: number; metaLength: number }): BlockMeta | undefined {
  let meta: BlockMeta;
  try {
    meta = JSON.parse(bytes.toString('utf8', block.at + FRAME, block.at + FRAME + block.metaLength));
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
 * Appends one block at `end` to the log with nonce `nonce`, its checksum running on from `chain` there (cutting off whatever unverified bytes
 * follow it). Throws on failure: the caller removes the log, so that no reader trusts a half-written one (it would
 * not verify anyway).
 */
export function appendBlock(root: string, name: string, nonce: number, chain: number, end: number, entries: Uint32Array, meta: BlockMeta): number {
  const fd = openCacheFile(root, name, 'r+');
  if (fd === undefined) throw new Error(`${name} cannot be appended to`);
  try {
    const block = encodeBlock(nonce, end, chain, entries, meta);
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
