// CRC-32 of the derived files (src/journal/derived/checksum.ts): SheetJS's crc-32 for a process's first 24 KiB,
// node:zlib's public crc32 past them, with the seeds the derived files chain and name their pieces by; known vectors,
// views into larger buffers, pieces chained by seed.
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { buildSync } from 'esbuild';
import { bundledModule } from '../../helpers/bundle';
import { tempDir } from '../../helpers/cli';
import { crc32, seedOf } from '../../../src/journal/derived/checksum';

describe('crc32', () => {
  it('is the zlib polynomial: the known vectors', () => {
    // The check value of CRC-32/ISO-HDLC (the "123456789" vector), and well-known others (32 zero bytes, 32 0xff).
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.from('a'))).toBe(0xe8b7be43);
    expect(crc32(Buffer.from('abc'))).toBe(0x352441c2);
    expect(crc32(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
    expect(crc32(Buffer.alloc(32, 0))).toBe(0x190a55ad);
    expect(crc32(Buffer.alloc(32, 0xff))).toBe(0xff6cab0b);
  });

  it('continues from a seed: pieces chained by their seed give the whole body’s checksum', () => {
    expect(crc32(Buffer.from('6789'), crc32(Buffer.from('12345')))).toBe(0xcbf43926);
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const whole = crc32(big);
    for (const piece of [1, 7, 4096, 65_537]) {
      let c = 0;
      for (let at = 0; at < big.length; at += piece) c = crc32(big.subarray(at, at + piece), c);
      expect(c, `pieces of ${piece}`).toBe(whole);
    }
  });

  it('of no bytes is the seed (zlib answers 0 for a null buffer, whatever the seed)', () => {
    for (const seed of [0, 1, 0x43525558, 0xffffffff]) expect(crc32(new Uint8Array(0), seed)).toBe(seed);
  });

  it('takes any seed as an unsigned 32-bit number, and answers one', () => {
    const bytes = Buffer.from('crux');
    expect(crc32(bytes, -1)).toBe(crc32(bytes, 0xffffffff));
    expect(crc32(bytes, 2 ** 32 + 5)).toBe(crc32(bytes, 5));
    for (let i = 0; i < 200; i++) {
      const c = crc32(randomBytes(i), randomBytes(4).readUInt32LE(0));
      expect(Number.isInteger(c) && c >= 0 && c <= 0xffffffff).toBe(true);
    }
  });

  it('of a view into a larger buffer checksums the view’s own bytes only', () => {
    for (const length of [1, 8, 1000, 200_000]) {
      const bytes = randomBytes(length);
      const inner = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]).subarray(2, 2 + length);
      const seed = randomBytes(4).readUInt32LE(0);
      expect(crc32(inner, seed)).toBe(crc32(Buffer.from(bytes), seed));
      expect(crc32(new Uint8Array(inner.buffer, inner.byteOffset, inner.length), seed)).toBe(crc32(bytes, seed));
    }
  });

  it('seedOf names a piece by its file’s nonce and its position: each differs, the same two give the same', () => {
    expect(seedOf(7, 4096)).toBe(seedOf(7, 4096));
    const seeds = new Set<number>();
    for (const nonce of [0, 1, 0xffffffff]) for (const position of [0, 1, 4096, 2 ** 40]) seeds.add(seedOf(nonce, position));
    expect(seeds.size).toBe(12);
  });

  it('loads node:zlib only for a large piece (a short command never does), never calls process.binding, and agrees across the two', () => {
    // The module as the bundle has it, in a process whose process.binding throws (from a file: `node -e` loads more).
    const code = bundledModule(new URL('../../../src/journal/derived/checksum.ts', import.meta.url));
    const script = `process.binding = () => { throw new Error('process.binding called'); };
      ${code}
      { const zlib = () => process.moduleLoadList.includes('NativeModule zlib');
      const { crc32 } = module.exports;
      const small = crc32(Buffer.from('123456789'));
      const afterSmall = zlib();
      const big = Buffer.alloc(200000, 7);
      const whole = crc32(big);
      const pieces = crc32(big.subarray(100000), crc32(big.subarray(0, 100000)));
      const mixed = crc32(big.subarray(1000), crc32(big.subarray(0, 1000)));
      process.stdout.write(JSON.stringify([small, afterSmall, whole === pieces, zlib(), mixed === whole])); }`;
    const file = join(tempDir(), 'checksum.cjs');
    fs.writeFileSync(file, script);
    const out = execFileSync(process.execPath, [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(JSON.parse(out)).toEqual([0xcbf43926, false, true, true, true]);
  });

  it('loads node:zlib once a process has checksummed 24 KiB, in one piece or many (a delta log of a few hundred puts), and the answers agree', () => {
    // Cold crc-32 over tens of KiB runs in V8's interpreter: a get over a 46 KiB delta log cost 5–7 ms more than
    // through node:zlib. A budget per process, not a piece: many small pieces add up as one large one does.
    const code = bundledModule(new URL('../../../src/journal/derived/checksum.ts', import.meta.url));
    const run = (body: string) => {
      const file = join(tempDir(), 'checksum.cjs');
      fs.writeFileSync(file, `${code}\n{ const zlib = () => process.moduleLoadList.includes('NativeModule zlib'); const { crc32 } = module.exports; ${body} }`);
      return JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    };
    // One piece of 40 KiB: node:zlib's, and the same checksum as 40 pieces of 1 KiB through crc-32 in another process.
    const [whole, loaded] = run(`const c = crc32(Buffer.alloc(40 * 1024, 7), 5); process.stdout.write(JSON.stringify([c, zlib()]));`);
    expect(loaded).toBe(true);
    const [pieces, loadedAfter] = run(`const b = Buffer.alloc(40 * 1024, 7); let c = 5; const seen = [];
      for (let at = 0; at < b.length; at += 1024) { c = crc32(b.subarray(at, at + 1024), c); seen.push(zlib()); }
      process.stdout.write(JSON.stringify([c, seen]));`);
    expect(pieces).toBe(whole);
    // The first 24 pieces (24 KiB) through crc-32, node:zlib from the 25th on.
    expect(loadedAfter.indexOf(true)).toBe(24);
    expect(loadedAfter.slice(24).every(Boolean)).toBe(true);
  });

  it('requires crc-32 on its first small checksum, not at start-up; once Node’s streams are loaded (a writer’s lock socket), node:zlib’s instead, crc-32 never', () => {
    // crc-32 builds 16 tables of 256 words when it loads (interpreted JavaScript in a short process): a writer, which
    // loads node:net (and Node's streams) for its lock before it opens an index, checksums through node:zlib, which
    // then costs less to load. Here crc-32 is left outside the bundle, to count the process's requires of it.
    const dir = tempDir();
    const entry = join(dir, 'entry.ts');
    const src = new URL('../../../src/', import.meta.url).pathname;
    fs.writeFileSync(entry, `export { crc32 } from '${src}journal/derived/checksum'; export { noteStreamsLoaded } from '${src}shared/node-streams';`);
    const code = buildSync({ entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', write: false, external: ['crc-32'] }).outputFiles[0]!.text;
    const crcPath = createRequire(import.meta.url).resolve('crc-32');
    const run = (body: string) => {
      const file = join(dir, 'checksum.cjs');
      fs.writeFileSync(
        file,
        `const asked = []; const realRequire = require;
        { const require = (id) => { if (id === 'crc-32') { asked.push(id); return realRequire(${JSON.stringify(crcPath)}); } return realRequire(id); };
        ${code} }
        { const zlib = () => process.moduleLoadList.includes('NativeModule zlib');
        const { crc32, noteStreamsLoaded } = module.exports; ${body} }`,
      );
      return JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    };
    expect(
      run(`const atStart = asked.length; const c = crc32(Buffer.from('123456789')); process.stdout.write(JSON.stringify([atStart, c, asked.length, zlib()]));`),
    ).toEqual([0, 0xcbf43926, 1, false]);
    expect(
      run(`noteStreamsLoaded(); const c = crc32(Buffer.from('123456789')); const d = crc32(Buffer.from('6789'), crc32(Buffer.from('12345')));
        process.stdout.write(JSON.stringify([c, d, asked.length, zlib()]));`),
    ).toEqual([0xcbf43926, 0xcbf43926, 0, true]);
  });
});
