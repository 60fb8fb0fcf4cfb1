// Checksums of derived files. CRC-32 (the zlib polynomial) computed in JS for pages and blocks (≈ 10 µs per
// 4 KiB), and by zlib's native crc32 for large bodies (≈ 7 GB/s, but node:zlib costs ~1 ms to load, so it is
// loaded only when a body is large). Every checksum is seeded: a page or a block is checked with the identity
// of the file it belongs to and its own position, so a zeroed page (whose stored checksum reads 0), a page
// copied from another cache, or a block moved within its file does not verify.

// Slicing-by-8 (Intel's method): eight tables, eight bytes a step — about five times the byte-at-a-time loop,
// which matters most while the code is still cold (every call is a fresh process).
const TABLES = (() => {
  const t = new Int32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 255]!;
  return t;
})();

const NATIVE_FROM_BYTES = 64 * 1024;
/** Past this many bytes checksummed in JS (a long range of pages), zlib's native CRC pays for its loading. */
const NATIVE_AFTER_BYTES = 512 * 1024;
let jsBytes = 0;
let native: ((data: Uint8Array, value?: number) => number) | undefined;

/**
 * A caller about to checksum `bytes` bytes in many small pieces (a log's blocks, a snapshot's page table):
 * past NATIVE_FROM_BYTES in all, zlib's CRC is loaded now rather than after NATIVE_AFTER_BYTES of cold JS
 * (~20 ns a byte in a fresh process, against ~1.2 ms to load zlib once).
 */
export function expectChecksumBytes(bytes: number): void {
  if (native === undefined && bytes >= NATIVE_FROM_BYTES) loadNative();
}

function loadNative(): void {
  const zlib = require('node:zlib') as typeof import('node:zlib') & { crc32?: (data: Uint8Array, value?: number) => number };
  native = zlib.crc32 ?? jsCrc32;
}

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  // zlib answers 0 for no bytes (a null buffer), whatever the seed; the CRC of nothing is the seed.
  if (bytes.length === 0) return seed >>> 0;
  if (native !== undefined) return native(bytes, seed) >>> 0;
  jsBytes += bytes.length;
  if (bytes.length >= NATIVE_FROM_BYTES || jsBytes > NATIVE_AFTER_BYTES) {
    if (native === undefined) loadNative();
    return native!(bytes, seed) >>> 0;
  }
  return jsCrc32(bytes, seed);
}

/** The JS implementation (exported for its test against zlib). */
export function jsCrc32(bytes: Uint8Array, seed = 0): number {
  const t = TABLES;
  let c = ~seed;
  let i = 0;
  const n = bytes.length;
  for (const end = n - 7; i < end; i += 8) {
    const a = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      t[1792 + (a & 255)]! ^
      t[1536 + ((a >>> 8) & 255)]! ^
      t[1280 + ((a >>> 16) & 255)]! ^
      t[1024 + (a >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^
      t[512 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]!) & 255]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** A seed naming where a checksummed piece belongs: a file's nonce and the piece's position in it. */
export function seedOf(nonce: number, position: number): number {
  SEED.writeUInt32LE(nonce >>> 0, 0);
  SEED.writeDoubleLE(position, 4);
  return jsCrc32(SEED, 0x43525558); // "CRUX"
}
const SEED = Buffer.alloc(12);
