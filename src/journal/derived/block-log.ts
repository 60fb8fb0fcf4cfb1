// The index file's framing, the index side's one block log (as LevelDB's MANIFEST is a log): blocks appended, never
// rewritten in place; a freeze or a merge step (index-levels.ts) replaces the file whole, its new manifest first.
//
// File: the 512-byte header (cache-file.ts: kind, version, the store's declaration, the nonce), then blocks:
//   "CXLB" · its own offset u32 · entry count u32 · meta length u32 · meta (JSON, space-padded to a multiple of 4) ·
//   entries · CRC-32 of every byte from the first block to here, seeded with the file's nonce, stored masked with it.
// Each block's meta names the journal state after it (its binding) and the live-bytes estimate; the first block's
// is the manifest (index-base.ts: the runs, and what the base covers), the blocks after it are the log: what writers
// added since, each block's entries. The checksums run on from block to block, so a reader verifies the whole file
// with one pass over its bytes (a log holds hundreds of blocks, and every command that opens the index reads it).
// The mask keeps them running: a CRC continued over its own value comes to a constant (the residue), which would
// start every block afresh; masked with a value of this file's, each block's checksum depends on this file's nonce,
// and its offset, which it carries, on where it lies. So a block moved, dropped or copied from another file does not
// verify. A block that is short, torn or does not verify ends the log there: a short write on a full disk, a crash
// before the page cache reached the disk, a flipped bit — the index then covers less of the journal, and the rest is
// read from the journal itself. A writer cuts such a tail off before it appends (it is crux's own cache).
import { fs } from '../../shared/fs';
import { crashPoint } from '../../shared/crash-point';
import { crc32, seedOf } from './checksum';
import { decodeHeader, encodeHeader, HEADER_BYTES, isBinding, openCacheFile, writeFully, type JournalBinding } from './cache-file';
import { ENTRY_BYTES, ENTRY_WORDS, EntryList } from './entries';

const MAGIC = 0x424c5843; // "CXLB"

/** The block frame before the meta: magic, offset, entry count, meta length. */
const FRAME = 16;

/** Where a log's checksums start: a seed of its nonce and the first block's offset. */
export const chainStart = (nonce: number) => seedOf(nonce, HEADER_BYTES);
/** What a log's checksums are stored masked with (nonzero: see the top of this file). */
const maskOf = (nonce: number) => seedOf(nonce, 0) | 1;

/** The running checksum past a block's trailer, from the checksum `sum` before it (the trailer holds it masked). */
const chainAfter = (bytes: Uint8Array, trailerAt: number, sum: number) => crc32(bytes.subarray(trailerAt, trailerAt + 4), sum);

export interface LogHeader {
  readonly nonce: number;
}

export interface BlockMeta {
  readonly binding: JournalBinding;
  readonly live: number;
}

export interface OpenLog {
  readonly header: LogHeader;
  /** The first block's meta (an index file's manifest), undefined when no block verified; where it ends, the chain there. */
  readonly first: BlockMeta | undefined;
  readonly firstEnd: number;
  readonly firstChain: number;
  /** The entries of every verified block. */
  readonly entries: EntryList;
  /** The last verified block's meta (the first block's when it is the only one), if any block verified. */
  readonly last: BlockMeta | undefined;
  /** Where the verified blocks end (a writer appends there). */
  readonly end: number;
  /** The running checksum past the last verified block (a writer's next block runs on from it). */
  readonly chain: number;
  readonly blocks: number;
  /** The file's inode, as read (readLog): a writer appends only to the file it read, never to one that replaced it. */
  readonly ino?: number;
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

/** A new log's bytes: its header, then `blocks` in order (an index file written whole: its manifest, then the log it carries on). */
export function encodeLog(header: LogHeader, blocks: readonly { entries: Uint32Array; meta: BlockMeta }[]): Buffer[] {
  const out = [encodeHeader(header)];
  let at = HEADER_BYTES;
  let chain = chainStart(header.nonce);
  for (const { entries, meta } of blocks) {
    const block = encodeBlock(header.nonce, at, chain, entries, meta);
    chain = chainAfter(block, block.length - 4, (block.readUInt32LE(block.length - 4) ^ maskOf(header.nonce)) >>> 0);
    out.push(block);
    at += block.length;
  }
  return out;
}

interface Block {
  readonly at: number;
  readonly count: number;
  readonly metaLength: number;
  readonly size: number;
}

/**
 * Parses a log's bytes: the header (when `accept` takes it) and every block up to the first that does not verify.
 * Only the first and the last verified blocks' metas are decoded (the log's state is its last block's; earlier
 * metas are covered by the checksums), and the entries are copied once, into one list.
 */
export function parseLog(bytes: Buffer, accept: (header: any) => boolean): OpenLog | undefined {
  const header = decodeHeader<LogHeader>(bytes);
  if (header === undefined || !Number.isInteger(header.nonce) || !accept(header)) return undefined;
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
  const chainTo = (end: number) => (end === HEADER_BYTES ? start : chainAfter(bytes, end - 4, (view.getUint32(end - 4, true) ^ mask) >>> 0));
  const end = verified.length === 0 ? HEADER_BYTES : verified.at(-1)!.at + verified.at(-1)!.size;
  const firstEnd = verified.length === 0 ? HEADER_BYTES : verified[0]!.at + verified[0]!.size;
  const first = verified.length === 0 ? undefined : verified.length === 1 ? last : metaOf(bytes, verified[0]!);
  const [firstChain, chain, blocks] = [chainTo(firstEnd), chainTo(end), verified.length];
  return { header, first, firstEnd, firstChain, entries: EntryList.of(words), last, end, chain, blocks };
}

/**
 * Whether the last framed block's checksum, over every byte from the first block, holds. Then every block's does:
 * a block whose bytes changed leaves the running checksum wrong from there on.
 */
function lastHolds(bytes: Buffer, view: DataView, framed: readonly Block[], start: number, mask: number): boolean {
  if (framed.length === 0) return true;
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

/** The log in cache/ file `name`, if its header is one `accept` takes (at most `maxBytes` long). */
export function readLog(root: string, name: string, accept: (header: any) => boolean, maxBytes: number): OpenLog | undefined {
  let bytes: Buffer;
  let ino: number;
  const fd = openCacheFile(root, name);
  if (fd === undefined) return undefined;
  try {
    const st = fs.fstatSync(fd);
    ino = st.ino;
    if (st.size > maxBytes) return undefined;
    bytes = Buffer.allocUnsafe(st.size);
    if (fs.readSync(fd, bytes, 0, st.size, 0) !== st.size) return undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
  const log = parseLog(bytes, accept);
  return log === undefined ? undefined : { ...log, ino };
}

/**
 * Appends one block of `entries` at the log's `end`, its checksum running on from its `chain` (cutting off whatever
 * follows: unverified bytes, or blocks left out). Throws on failure, and when the file is no longer the one read (a
 * reader's freeze replaced it): a half-written block does not verify.
 */
export function appendBlock(root: string, name: string, log: Omit<OpenLog, 'entries'>, entries: Uint32Array, meta: BlockMeta): number {
  const { end, chain } = log;
  const fd = openCacheFile(root, name, 'r+');
  if (fd === undefined) throw new Error(`${name} cannot be appended to`);
  try {
    const st = fs.fstatSync(fd);
    if (st.ino !== log.ino) throw new Error(`${name} was replaced since it was read`);
    const block = encodeBlock(log.header.nonce, end, chain, entries, meta);
    if (st.size !== end) fs.ftruncateSync(fd, end);
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
