// Checksums of derived files: CRC-32 (the zlib polynomial), by SheetJS's crc-32 for the few small pieces a
// short command checks (loading node:zlib would cost a get ~2 ms: it loads Node's streams), and by node:zlib's
// public crc32 (Node ≥ 20.15; crux needs ≥ 20.19) past 64 KiB, where its native loop is many times faster. Every checksum is seeded: a page or a block is checked with the identity of the file it belongs
// to and its own position, so a zeroed page (whose stored checksum reads 0), a page copied from another cache,
// or a block moved within its file does not verify.

import { buf as smallCrc32 } from 'crc-32';

type Crc = (data: Uint8Array, value?: number) => number;
// node:zlib is required on first use, not at start-up: a command that checksums only small pieces never loads it.
let zlibCrc32: Crc | undefined;
const LARGE = 64 * 1024;

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  // zlib answers 0 for no bytes (a null buffer), whatever the seed; the CRC of nothing is the seed.
  if (bytes.length === 0) return seed >>> 0;
  if (bytes.length < LARGE) return smallCrc32(bytes, seed | 0) >>> 0;
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
