// Checksums of derived files: CRC-32 (the zlib polynomial), by a small WebAssembly module for pages and blocks
// and by zlib's native crc32 past a MiB. Every checksum is seeded: a page or a block is checked with the identity
// of the file it belongs to and its own position, so a zeroed page (whose stored checksum reads 0), a page
// copied from another cache, or a block moved within its file does not verify.
import { CRC_INPUT_AT, MEMORY_BYTES, wasmKernels } from '../../shared/wasm';

// CRC-32 runs in WebAssembly: the kernel in src/shared/wasm.ts's module (kernels.wat), with SHA-256's. It
// checksums a byte in a few instructions from the first call, where the JS loop runs cold (~0.8 ms for a get's
// 5 KB of pages and headers in a fresh process), is optimized by TurboFan in the middle of a command and needs
// its tables built first. Without WebAssembly (`node --jitless`) the JS loop below does the same work.
/** The kernel's input: from CRC_INPUT_AT to the end of the module's memory. */
const WASM_CHUNK = MEMORY_BYTES - CRC_INPUT_AT;

interface WasmCrc {
  readonly crc: (seed: number, length: number) => number;
  readonly input: Uint8Array;
}
let wasm: WasmCrc | null | undefined;

function loadWasm(): WasmCrc | null {
  const k = wasmKernels();
  return k === null ? null : { crc: k.crc, input: new Uint8Array(k.memory, CRC_INPUT_AT, WASM_CHUNK) };
}

/** The WebAssembly implementation, a chunk of at most WASM_CHUNK bytes at a time (exported for its test). */
export function wasmCrc32(bytes: Uint8Array, seed = 0): number {
  if (wasm === undefined) wasm = loadWasm(); // null (no WebAssembly) is kept: not tried again each call
  if (wasm === null) return jsCrc32(bytes, seed);
  let c = seed >>> 0;
  for (let at = 0; at < bytes.length; at += WASM_CHUNK) {
    const chunk = bytes.subarray(at, Math.min(at + WASM_CHUNK, bytes.length));
    wasm.input.set(chunk);
    c = wasm.crc(c, chunk.length) >>> 0;
  }
  return c;
}

// zlib's native CRC (~7 GB/s) pays for node:zlib's loading (~1.2 ms, 8 M instructions) past about a MiB of
// WebAssembly's (~15 instructions a byte).
const NATIVE_FROM_BYTES = 1024 * 1024;
let checkedBytes = 0;
let native: ((data: Uint8Array, value?: number) => number) | undefined;

/**
 * A caller about to checksum `bytes` bytes in many small pieces (a log's blocks, a snapshot's page table):
 * past NATIVE_FROM_BYTES in all, zlib's CRC is loaded now rather than after a MiB in small pieces.
 */
export function expectChecksumBytes(bytes: number): void {
  if (native === undefined && bytes >= NATIVE_FROM_BYTES) loadNative();
}

function loadNative(): void {
  const zlib = require('node:zlib') as typeof import('node:zlib') & { crc32?: (data: Uint8Array, value?: number) => number };
  native = zlib.crc32 ?? wasmCrc32;
}

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  // zlib answers 0 for no bytes (a null buffer), whatever the seed; the CRC of nothing is the seed.
  if (bytes.length === 0) return seed >>> 0;
  if (native !== undefined) return native(bytes, seed) >>> 0;
  checkedBytes += bytes.length;
  if (checkedBytes > NATIVE_FROM_BYTES) {
    loadNative();
    return native!(bytes, seed) >>> 0;
  }
  return wasmCrc32(bytes, seed);
}

// Slicing-by-8 (Intel's method): eight tables, eight bytes a step — about five times the byte-at-a-time loop.
// Built on first use: only a Node without WebAssembly needs them.
let tables: Int32Array | undefined;
function crcTables(): Int32Array {
  const t = new Int32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 255]!;
  return t;
}

/** The JS implementation (exported for its test against zlib). */
export function jsCrc32(bytes: Uint8Array, seed = 0): number {
  tables ??= crcTables();
  const t = tables;
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
  return wasmCrc32(SEED, 0x43525558); // "CRUX"
}
const SEED = Buffer.alloc(12);
