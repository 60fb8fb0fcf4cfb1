// Checksums of derived files: CRC-32 (the zlib polynomial), by SheetJS's crc-32 for a process's first few KiB (the
// small pieces a short command checks: loading node:zlib costs ~2 ms, it loads Node's streams), and by node:zlib's
// public crc32 (Node ≥ 20.15; crux needs ≥ 20.19) past them, where its native loop is many times faster. The budget
// is a process's, not a piece's: cold JavaScript over tens of KiB (an index's delta log of a few hundred puts, read
// whole by every command that opens the index) runs in V8's interpreter until V8 compiles it optimised, and a
// `session get` over a 46 KiB log cost 5–7 ms more through crc-32 than through node:zlib (measured: CPU medians of 40
// interleaved runs). Every checksum is seeded: a page or a block is checked with the identity of the file it
// belongs to and its own position, so a zeroed page (whose stored checksum reads 0), a page copied from another
// cache, or a block moved within its file does not verify.

import { streamsLoaded } from '../../shared/node-streams';

type Crc = (data: Uint8Array, value?: number) => number;
// Each is required on first use, not at start-up: a command that checksums only small pieces never loads node:zlib,
// and one that checksums none, or only after node:net loaded Node's streams (a writer, which takes the lock before
// it opens the index), never builds crc-32's tables (16 of 256 words, ~1 ms of interpreted JavaScript a process).
let zlibCrc32: Crc | undefined;
let smallCrc32: Crc | undefined;
/**
 * Bytes a process checksums through crc-32 before it loads node:zlib: 16 KiB cost ~0.4 ms of CPU in a fresh
 * process, 24 KiB ~0.6, 28–32 KiB 0.9–4 ms (V8 compiles the loop optimised meanwhile), node:zlib ~2 ms to load. A
 * get over a small store checksums its index's log (≤ ~8.5 KiB), the manifest and the pages it reads of the
 * partition: two of them once it holds more than one page (~70 puts), up to 17.5 KiB in all, which a budget of
 * 16 KiB sent through node:zlib for a quarter of the gets (docs/performance.md, Start-up, a fifth look).
 */
const SMALL_BUDGET = 24 * 1024;
let smallBytes = 0;

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  // zlib answers 0 for no bytes (a null buffer), whatever the seed; the CRC of nothing is the seed.
  if (bytes.length === 0) return seed >>> 0;
  if (zlibCrc32 === undefined && !streamsLoaded() && (smallBytes += bytes.length) <= SMALL_BUDGET) {
    smallCrc32 ??= (require('crc-32') as typeof import('crc-32')).buf;
    return smallCrc32(bytes, seed | 0) >>> 0;
  }
  zlibCrc32 ??= (require('node:zlib') as typeof import('node:zlib')).crc32;
  return zlibCrc32(bytes, seed >>> 0) >>> 0;
}

/** A seed naming where a checksummed piece belongs: a file's nonce and the piece's position in it. */
export function seedOf(nonce: number, position: number): number {
  // Through a DataView: its methods are V8's own, where Buffer's write* run as JS, cold in a short command.
  SEED_VIEW.setUint32(0, nonce >>> 0, true);
  SEED_VIEW.setFloat64(4, position, true);
  return crc32(SEED, 0x43525558); // "CRUX"
}
const SEED = new Uint8Array(12);
const SEED_VIEW = new DataView(SEED.buffer);
