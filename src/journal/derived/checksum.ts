// Checksums of derived files: CRC-32 (the zlib polynomial), by zlib's own crc32 through Node's zlib binding, by a
// small WebAssembly module where that binding may not be had. Every checksum is seeded: a page or a block is
// checked with the identity of the file it belongs to and its own position, so a zeroed page (whose stored
// checksum reads 0), a page copied from another cache, or a block moved within its file does not verify.
import { CRC_INPUT_AT, MEMORY_BYTES, wasmKernels } from '../../shared/wasm';
import { nodeBinding } from '../dir/lock/node-binding';

type NativeCrc = (data: Uint8Array, value: number) => number;

// zlib's crc32 (~7 GB/s from its first call), straight from Node's zlib binding (Node ≥ 20.15): node:zlib itself
// pulls in Node's streams to load (~1.2 ms, 8 M instructions), and the WebAssembly kernel, compiled by V8's
// baseline tier, checksums ~3 ns a byte (a get through a 1 MiB index log paid ~3 ms for it). The binding checks
// its arguments natively (a view, then a uint32 seed), so only those reach it. Undefined: not asked yet; null: not
// to be had (the permission model refuses process.binding), and the kernel below does the work.
let direct: NativeCrc | null | undefined;

function zlibBinding(): NativeCrc | null {
  const fn = nodeBinding('zlib')?.crc32;
  return typeof fn === 'function' ? (fn as NativeCrc) : null;
}

/** Which implementation crc32 runs in this process (for its test: the binding wherever Node gives it). */
export const crcEngine = (): 'binding' | 'kernel' => ((direct ??= zlibBinding()) === null ? 'kernel' : 'binding');

// Without the binding: the WebAssembly kernel in src/shared/wasm.ts's module (kernels.wat), with SHA-256's. It
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

// Without the binding, node:zlib's crc32 pays for its loading past about a MiB of the kernel's work.
const NATIVE_FROM_BYTES = 1024 * 1024;
let checkedBytes = 0;
let loaded: ((data: Uint8Array, value?: number) => number) | undefined;

/**
 * A caller about to checksum `bytes` bytes in many small pieces (a log's blocks, a snapshot's page table):
 * without the binding, past NATIVE_FROM_BYTES in all, node:zlib is loaded now rather than after a MiB in pieces.
 */
export function expectChecksumBytes(bytes: number): void {
  if ((direct ??= zlibBinding()) === null && loaded === undefined && bytes >= NATIVE_FROM_BYTES) loadZlib();
}

function loadZlib(): void {
  const zlib = require('node:zlib') as typeof import('node:zlib') & { crc32?: (data: Uint8Array, value?: number) => number };
  loaded = zlib.crc32 ?? wasmCrc32;
}

/** CRC-32 of `bytes`, continuing from `seed` (0 for a fresh checksum). */
export function crc32(bytes: Uint8Array, seed = 0): number {
  // zlib answers 0 for no bytes (a null buffer), whatever the seed; the CRC of nothing is the seed.
  if (bytes.length === 0) return seed >>> 0;
  if ((direct ??= zlibBinding()) !== null) return direct(bytes, seed >>> 0) >>> 0;
  if (loaded !== undefined) return loaded(bytes, seed >>> 0) >>> 0;
  checkedBytes += bytes.length;
  if (checkedBytes > NATIVE_FROM_BYTES) {
    loadZlib();
    return loaded!(bytes, seed >>> 0) >>> 0;
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
  // Through a DataView: its methods are V8's own, where Buffer's write* run as JS, cold in a short command.
  SEED_VIEW.setUint32(0, nonce >>> 0, true);
  SEED_VIEW.setFloat64(4, position, true);
  return crc32(SEED, 0x43525558); // "CRUX"
}
const SEED = new Uint8Array(12);
const SEED_VIEW = new DataView(SEED.buffer);
