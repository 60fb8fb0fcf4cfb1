// CRC-32 of the derived files: the WebAssembly module and the JS loop against zlib's own, at every length that
// crosses a step or a chunk of either, with seeds; and the JS loop alone where a Node has no WebAssembly.
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bundledModule } from '../../helpers/bundle';
import { PERMISSION_FLAG } from '../../helpers/cli';
import { crc32, crcEngine, jsCrc32, wasmCrc32 } from '../../../src/journal/derived/checksum';

const native = (zlib as unknown as { crc32: (data: Uint8Array, value?: number) => number }).crc32;
// (zlib answers 0 for no bytes whatever the seed; crc32 answers the seed, as both implementations here do)
const expected = (bytes: Uint8Array, seed: number) => (bytes.length === 0 ? seed : native(bytes, seed));

describe('crc32', () => {
  it('is zlib’s CRC-32 (node:zlib has crc32 on every Node crux runs on: ≥ 20.15)', () => {
    expect(typeof native).toBe('function');
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(wasmCrc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('runs zlib’s crc32 through Node’s zlib binding, node:zlib’s JS unloaded', () => {
    expect(crcEngine()).toBe('binding');
    const bytes = randomBytes(100_000);
    const inner = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]).subarray(2, 2 + bytes.length);
    for (const seed of [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, -1]) expect(crc32(inner, seed)).toBe(native(bytes, seed >>> 0));
  });

  it('where process.binding is refused (the permission model) the WebAssembly kernel answers the same, and no warning is printed', () => {
    const code = bundledModule(new URL('../../../src/journal/derived/checksum.ts', import.meta.url));
    const script = `const module = { exports: {} }; (function (exports, module, require) { ${code} })(module.exports, module, require);
      const { crc32, crcEngine } = module.exports;
      process.stdout.write(JSON.stringify([crcEngine(), crc32(Buffer.from('123456789')), crc32(Buffer.alloc(5000, 9), 77)]));`;
    const run = (flags: string[]) => execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const expectedRow = (engine: string) => [engine, 0xcbf43926, native(Buffer.alloc(5000, 9), 77)];
    expect(JSON.parse(run([PERMISSION_FLAG, '--allow-fs-read=*']))).toEqual(expectedRow('kernel'));
    // process.binding warns only under --pending-deprecation, and that warning is kept from the user.
    expect(JSON.parse(run(['--pending-deprecation', '--throw-deprecation']))).toEqual(expectedRow('binding'));
  });

  it('WebAssembly and JS agree with zlib at every length mod 8, with seeds', () => {
    for (let length = 0; length < 80; length++) {
      const bytes = randomBytes(length);
      const seed = randomBytes(4).readUInt32LE(0);
      expect(wasmCrc32(bytes, seed)).toBe(expected(bytes, seed));
      expect(jsCrc32(bytes, seed)).toBe(expected(bytes, seed));
      expect(crc32(bytes, seed)).toBe(expected(bytes, seed));
    }
  });

  it('WebAssembly takes a body past its 63 KiB of memory in chunks, continuing the checksum', () => {
    for (const length of [64 * 1024 - 1024 - 1, 64 * 1024 - 1024, 64 * 1024 - 1023, 200_000]) {
      const bytes = randomBytes(length);
      const seed = randomBytes(4).readUInt32LE(0);
      expect(wasmCrc32(bytes, seed)).toBe(native(bytes, seed));
      // A view into a larger buffer checksums its own bytes only.
      const inner = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]).subarray(2, 2 + length);
      expect(wasmCrc32(inner, seed)).toBe(native(bytes, seed));
    }
  });

  it('pieces chained by their seed give the whole body’s checksum, across the switch to zlib', () => {
    const big = randomBytes(3 * 1024 * 1024);
    let c = 0;
    for (let at = 0; at < big.length; at += 4096) c = crc32(big.subarray(at, at + 4096), c);
    expect(c).toBe(native(big));
    expect(crc32(big)).toBe(native(big));
  });

  it('without WebAssembly (node --jitless) the JS loop answers the same', () => {
    // The module as the bundle has it, run by a Node whose V8 has no WebAssembly.
    const code = bundledModule(new URL('../../../src/journal/derived/checksum.ts', import.meta.url));
    const script = `const module = { exports: {} }; (function (exports, module) { ${code} })(module.exports, module);
      const { crc32 } = module.exports;
      process.stdout.write(JSON.stringify([typeof WebAssembly, crc32(Buffer.from('123456789')), crc32(Buffer.alloc(5000, 9), 77)]));`;
    const out = execFileSync(process.execPath, ['--jitless', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(JSON.parse(out)).toEqual(['undefined', 0xcbf43926, native(Buffer.alloc(5000, 9), 77)]);
  });
});
