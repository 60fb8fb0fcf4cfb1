// One WebAssembly module for both kernels (src/shared/wasm.ts, kernels.wat): SHA-256's memory and CRC-32's must
// never overlap, whatever order a command calls them in and however long their inputs.
import { hash, randomBytes } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { wasmCrc32 } from '../../../src/journal/derived/checksum';
import { INPUT_CHUNK, wasmSha256Hex } from '../../../src/shared/sha256';
import { CRC_INPUT_AT, MEMORY_BYTES, SHA_INPUT_AT, kernelsWasm, wasmKernels } from '../../../src/shared/wasm';

// The little of WebAssembly's API used here (the compiler's lib has no declarations for it).
interface WasmModuleApi {
  Module: { new (bytes: Uint8Array): object; exports(m: object): { kind: string; name: string }[]; imports(m: object): unknown[] };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmModuleApi }).WebAssembly;

describe('the WebAssembly kernels', () => {
  it('are one module: its memory, SHA-256’s two functions and CRC-32’s, nothing else', () => {
    const module = new WebAssembly.Module(kernelsWasm());
    expect(WebAssembly.Module.exports(module).map((e) => `${e.kind} ${e.name}`)).toEqual([
      'memory memory',
      'function blocks',
      'function finish',
      'function crc',
    ]);
    expect(WebAssembly.Module.imports(module)).toEqual([]);
    const k = wasmKernels()!;
    expect(k.memory.byteLength).toBe(MEMORY_BYTES);
    // SHA-256's input and the padding `finish` writes past it end before CRC-32's table (one page below its input).
    expect(SHA_INPUT_AT + INPUT_CHUNK + 72).toBeLessThanOrEqual(CRC_INPUT_AT - 1024);
    expect(wasmKernels()).toBe(k);
  });

  it('answer as node:crypto and zlib when their calls interleave, each input long enough to fill its area', () => {
    let seed = 1;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let round = 0; round < 40; round++) {
      // Texts of up to three SHA-256 passes (the blocks of one pass stay in memory while the next is encoded), and
      // buffers of up to three CRC-32 chunks, in both orders.
      const text = 'é😀x'.repeat(next() % 60_000);
      const bytes = randomBytes(next() % 200_000);
      const crcSeed = next();
      const checks = [
        () => expect(wasmSha256Hex(text)).toBe(hash('sha256', text, 'hex')),
        () => expect(wasmCrc32(bytes, crcSeed)).toBe(zlibCrc32(bytes, crcSeed) >>> 0),
      ];
      if (round % 2) checks.reverse();
      for (const check of checks) check();
    }
  });

  it('CRC-32 of a fresh table after SHA-256 filled all of its input: the table is not in SHA-256’s memory', () => {
    // The longest single pass SHA-256 makes, then a CRC whose every byte goes through the table.
    const text = 'z'.repeat(INPUT_CHUNK);
    expect(wasmSha256Hex(text)).toBe(hash('sha256', text, 'hex'));
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect(wasmCrc32(all)).toBe(zlibCrc32(all) >>> 0);
  });
});
