// The WebAssembly kernels: SHA-256 for record lines' hashes (sha256.ts) and CRC-32 for the derived files'
// checksums (journal/derived/checksum.ts), in one module: kernels.wat beside this file, assembled by wabt's
// wat2wasm into the bytes below (`npx wabt` 1.0.39: wat2wasm kernels.wat, then base64). A process that uses either compiles and
// instantiates the one module once: each instance reserves its own guarded memory, posts work to V8's worker
// threads and is unmapped at exit, ~0.4 ms of a command's wall time a module.
const KERNELS_WASM =
  'AGFzbQEAAAABGAVgAABgAX8Bf2ABfwBgAn9/AGACf38BfwMJCAAAAQICAwAEBQMBAAIHIgQGbWVtb3J5AgAGYmxvY2tzAAQGZmluaXNoAAUDY3JjAAcIAQEKywcIYgBBAEHnzKfQBjYCgARBAEGF3Z7bezYChARBAEHy5rvjAzYCiARBAEG66r+qejYCjARBAEH/pLmIBTYCkARBAEGM0ZXYeTYClARBAEGrs4/8ATYCmARBAEGZmoPfBTYCnAQLBgAQABAGCxkAIABBCHdB/4H8B3EgAEEIeEGA/oN4cXILvgMBDH8DQCABIAAgAWooAgAQAjYCgAIgAUEEaiIBQcAARw0ACwNAIAEoAsQBIQIgASgC+AEhAyABIAEoAsABIAEoAuQBaiACQQd4IAJBEnhzIAJBA3ZzIANBEXggA0ETeHMgA0EKdnNqajYCgAIgAUEEaiIBQYACRw0AC0EAKAKABCEFQQAoAoQEIQZBACgCiAQhB0EAKAKMBCEIQQAoApAEIQlBACgClAQhCkEAKAKYBCELQQAoApwEIQxBACEBA0AgDCAJQQZ4IAlBC3hzIAlBGXhzaiALIAkgCiALc3FzaiABKAIAIAEoAoACamohBCALIQwgCiELIAkhCiAIIARqIQkgByEIIAQgBUECeCAFQQ14cyAFQRZ4cyAFIAZxIAcgBSAGcnFyamohBCAGIQcgBSEGIAQhBSABQQRqIgFBgAJHDQALQQBBACgCgAQgBWo2AoAEQQBBACgChAQgBmo2AoQEQQBBACgCiAQgB2o2AogEQQBBACgCjAQgCGo2AowEQQBBACgCkAQgCWo2ApAEQQBBACgClAQgCmo2ApQEQQBBACgCmAQgC2o2ApgEQQBBACgCnAQgDGo2ApwECy8BAn9BgAghAUGACCAAQQZ0aiECAkADQCABIAJPDQEgARADIAFBwABqIQEMAAsLC7QBAQN/QYAIIABqIQIgAkGAAToAACACQQFqIQJBNyAAa0E/cSEEIAJBACAE/AsAIAIgBGohAiACIAFBHXYQAjYCACACIAFBA3QQAjYCBCACQQhqQYAIa0EGdhAEQaAEIQIDQCACQaAEa0EBdigCgAQhAyACQQhqIQQDQCACIANBHHZBMGpBJ0EAIANBHHZBCUsbajoAACADQQR0IQMgAkEBaiICIARHDQALIAJB4ARHDQALEAALTQEDfwNAIAAhAUEIIQIDQEGghuLtfiABQQF2cyABQQF2IAFBAXEbIQEgAkEBayICDQALIABBAnQgATYCgIAEIABBAWoiAEGAAkcNAAsLUQEDfyAAQX9zIQJBgIgEIQNBgIgEIAFqIQQCQANAIAMgBE8NASACIAMtAABzQf8BcUECdCgCgIAEIAJBCHZzIQIgA0EBaiEDDAALCyACQX9zCwuHAgEAQQALgAKYL4pCkUQ3cc/7wLWl27XpW8JWOfER8Vmkgj+S1V4cq5iqB9gBW4MSvoUxJMN9DFV0Xb5y/rHegKcG3Jt08ZvBwWmb5IZHvu/GncEPzKEMJG8s6S2qhHRK3KmwXNqI+XZSUT6YbcYxqMgnA7DHf1m/8wvgxkeRp9VRY8oGZykpFIUKtyc4IRsu/G0sTRMNOFNUcwpluwpqdi7JwoGFLHKSoei/oktmGqhwi0vCo1FsxxnoktEkBpnWhTUO9HCgahAWwaQZCGw3Hkx3SCe1vLA0swwcOUqq2E5Pypxb828uaO6Cj3RvY6V4FHjIhAgCx4z6/76Q62xQpPej+b7yeHHG';

/** Where each kernel's data lives in the module's memory (kernels.wat's map). */
export const SHA_INPUT_AT = 1024;
export const SHA_DIGEST_AT = 544;
export const CRC_INPUT_AT = 66_560;
/** The module's memory: two 64 KiB pages, never grown (views into it stay valid). */
export const MEMORY_BYTES = 2 * 64 * 1024;

export interface Kernels {
  /** SHA-256: compresses the first n whole 64-byte blocks of its input. */
  readonly blocks: (n: number) => void;
  /** SHA-256: pads and compresses its input's first `length` bytes, the end of a message of `total`; writes the hex. */
  readonly finish: (length: number, total: number) => void;
  /** CRC-32 of the first `length` bytes at CRC_INPUT_AT, continuing from `seed`. */
  readonly crc: (seed: number, length: number) => number;
  readonly memory: ArrayBuffer;
}

// The little of WebAssembly's API used here (the compiler's lib has no declarations for it).
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Omit<Kernels, 'memory'> & { memory: { buffer: ArrayBuffer } } };
}

let kernels: Kernels | null | undefined;

/** The instantiated kernels, made on first use; null where V8 has no WebAssembly (`node --jitless`). */
export function wasmKernels(): Kernels | null {
  if (kernels !== undefined) return kernels; // null (no WebAssembly) is kept: not tried again each call
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return (kernels = null);
  const { blocks, finish, crc, memory } = new api.Instance(new api.Module(Buffer.from(KERNELS_WASM, 'base64'))).exports;
  kernels = { blocks, finish, crc, memory: memory.buffer };
  return kernels;
}

/** The module's bytes (for its test against kernels.wat). */
export const kernelsWasm = (): Buffer => Buffer.from(KERNELS_WASM, 'base64');
