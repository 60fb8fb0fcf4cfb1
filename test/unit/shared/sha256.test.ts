// SHA-256 of strings (src/shared/sha256.ts: @noble/hashes for a process's first few KB, node:crypto past them):
// the FIPS 180-4 vectors, every length a block boundary or the padding can split, multi-byte and ill-formed
// UTF-16, seeded random text, and the same answers however a process's hashing is split between the two.
import { hash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledModule } from '../../helpers/bundle';
import { tempDir } from '../../helpers/cli';
import { sha256Hex } from '../../../src/shared/sha256';

const expected = (text: string) => hash('sha256', text, 'hex');

/** A seeded generator (mulberry32): a failure names its seed and comes back the same. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// UTF-16 units of every UTF-8 width, surrogate pairs, and lone surrogates (high, low, a low before a high).
const PIECES = [
  'a',
  '"',
  '\\',
  '\n',
  '\u0000',
  '\u007f',
  'é',
  '\u07ff',
  '\u0800',
  '€',
  '\ufffd',
  '\uffff',
  '😀',
  '\u{10ffff}',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
];
function randomText(next: () => number, units: number): string {
  let text = '';
  while (text.length < units) text += next() < 0.5 ? String.fromCharCode(32 + Math.floor(next() * 95)) : PIECES[Math.floor(next() * PIECES.length)]!;
  return text;
}

/**
 * sha256.ts as the bundle has it, run in a process of its own (its switch to node:crypto is per process), from a
 * file: `node -e` itself loads node:crypto.
 */
function inProcess(body: string, flags: string[] = []): unknown {
  const code = bundledModule(new URL('../../../src/shared/sha256.ts', import.meta.url));
  const script = join(tempDir(), 'sha256.cjs');
  fs.writeFileSync(
    script,
    `${code}
    { const { sha256Hex, expectHashUnits } = module.exports; ${body} }`,
  );
  return JSON.parse(execFileSync(process.execPath, [...flags, script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

const VECTORS: [string, string][] = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
  [
    'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
    'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
  ],
];

describe('sha256Hex', () => {
  it('is SHA-256: the FIPS 180-4 vectors, before and after the switch to node:crypto', () => {
    // In a fresh process: the first hashes go through @noble/hashes, the ones after a million 'a's through node:crypto.
    const out = inProcess(`const v = ${JSON.stringify(VECTORS.map(([t]) => t))};
      const before = v.map(sha256Hex);
      const million = sha256Hex('a'.repeat(1_000_000));
      process.stdout.write(JSON.stringify([before, million, v.map(sha256Hex), process.moduleLoadList.includes('NativeModule crypto')]));`);
    const digests = VECTORS.map(([, d]) => d);
    expect(out).toEqual([digests, 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0', digests, true]);
  });

  it('hashes a command’s few lines without loading node:crypto', () => {
    const out = inProcess(`const h = sha256Hex('{"v":1,"event":"session.put"}');
      process.stdout.write(JSON.stringify([h, process.moduleLoadList.includes('NativeModule crypto')]));`);
    expect(out).toEqual([expected('{"v":1,"event":"session.put"}'), false]);
  });

  it('agrees with node:crypto at every length 0..300 (the padding’s 55/56, 63/64, 119/120 included)', () => {
    const next = random(1);
    for (let length = 0; length <= 300; length++) {
      const text = Array.from({ length }, () => String.fromCharCode(32 + Math.floor(next() * 95))).join('');
      expect(sha256Hex(text), `length ${length}`).toBe(expected(text));
    }
  });

  it('hashes the UTF-8 of multi-byte characters, and a lone surrogate as U+FFFD, as node:crypto and TextEncoder do', () => {
    const replacement = hash('sha256', Buffer.from([0xef, 0xbf, 0xbd]), 'hex');
    for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff']) expect(sha256Hex(lone)).toBe(replacement);
    expect(sha256Hex('\udc00\ud800')).toBe(hash('sha256', Buffer.from([0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd]), 'hex'));
    expect(sha256Hex('😀')).toBe(hash('sha256', Buffer.from([0xf0, 0x9f, 0x98, 0x80]), 'hex'));
    // Each width at each byte offset around the 56- and 64-byte boundaries.
    for (const piece of PIECES) {
      for (let pad = 50; pad <= 66; pad++) {
        const text = `${'x'.repeat(pad)}${piece}`;
        expect(sha256Hex(text), `${pad} + ${JSON.stringify(piece)}`).toBe(expected(text));
      }
    }
  });

  it('hashes the same however a process’s hashing is split: @noble/hashes then node:crypto, or told beforehand', () => {
    // Each order in a process of its own: no hint (the switch after 32,768 units), a hint of a few units
    // (no switch yet), a hint past the switch (node:crypto at once).
    const next = random(7);
    const texts = Array.from({ length: 160 }, () => randomText(next, 20 + Math.floor(next() * 600)));
    for (const hint of [0, 300, 40_000]) {
      const out = inProcess(`if (${hint} > 0) expectHashUnits(${hint});
        process.stdout.write(JSON.stringify(${JSON.stringify(texts)}.map(sha256Hex)));`);
      expect(out, `hint ${hint}`).toEqual(texts.map(expected));
    }
  });

  it('hashes the same without WebAssembly (node --jitless): nothing here needs it', () => {
    const texts = ['', 'abc', 'x'.repeat(119), '😀\ud800é', 'w'.repeat(70_000)];
    const out = inProcess(`process.stdout.write(JSON.stringify([typeof WebAssembly, ${JSON.stringify(texts)}.map(sha256Hex)]));`, ['--jitless']);
    expect(out).toEqual(['undefined', texts.map(expected)]);
  });
});
