// Checksums of derived files. CRC-32 (the zlib polynomial) computed in JS for pages and blocks (≈ 10 µs per
// 4 KiB), and by zlib's native crc32 for large bodies (≈ 7 GB/s, but node:zlib costs ~1 ms to load, so it is
// loaded only when a body is large). Every checksum is seeded: a page or a block is checked with the identity
// of the file it belongs to and its own position, so a zeroed page (whose stored checksum reads 0), a page
// copied from another cache, or a block moved within its file does not verify.

const TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

const NATIVE_FROM_BYTES = 256 * 1024;
/** Past this many bytes checksummed in JS (a long range of pages), zlib's native CRC pays for its loading. */
const NATIVE_AFTER_BYTES = 512 * 1024;
let jsBytes = 0;
let native: ((data: Uint8Array, value?: number) => number) | undefined;

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  if (native !== undefined) return native(bytes, seed) >>> 0;
  jsBytes += bytes.length;
  if (bytes.length >= NATIVE_FROM_BYTES || jsBytes > NATIVE_AFTER_BYTES) {
    if (native === undefined) {
      const zlib = require('node:zlib') as typeof import('node:zlib') & { crc32?: (data: Uint8Array, value?: number) => number };
      native = zlib.crc32 ?? jsCrc32;
    }
    return native(bytes, seed) >>> 0;
  }
  return jsCrc32(bytes, seed);
}

function jsCrc32(bytes: Uint8Array, seed = 0): number {
  let c = ~seed;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 255]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** A seed naming where a checksummed piece belongs: a file's nonce and the piece's position in it. */
export function seedOf(nonce: number, position: number): number {
  const buf = Buffer.allocUnsafe(12);
  buf.writeUInt32LE(nonce >>> 0, 0);
  buf.writeDoubleLE(position, 4);
  return jsCrc32(buf, 0x43525558); // "CRUX"
}
