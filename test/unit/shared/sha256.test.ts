// SHA-256 of strings: the WebAssembly module and the switching front (sha256Hex) against node:crypto, at every
// length a block boundary or the padding can split, on multi-byte and ill-formed UTF-16, past the module's
// input chunk, in a seeded random run; the plain JavaScript of a process's first few KB (sha256-small.ts) the
// same way; and that alone where a Node has no WebAssembly.
import { hash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bundledModule } from '../../helpers/bundle';
import { INPUT_CHUNK, sha256Hex, wasmSha256Hex } from '../../../src/shared/sha256';
import { smallSha256Hex } from '../../../src/shared/sha256-small';

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

describe('sha256Hex', () => {
  it('is SHA-256: the FIPS 180-4 vectors', () => {
    expect(wasmSha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(wasmSha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(wasmSha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(smallSha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(smallSha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(smallSha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    // FIPS 180-4's long vector: a million 'a's (the bit length past 2^23, the scratch buffer grown).
    expect(smallSha256Hex('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('plain JavaScript: agrees with node:crypto at every length 0..300, on every UTF-8 width, lone surrogates and random text', () => {
    const next = random(6);
    for (let length = 0; length <= 300; length++) {
      const text = Array.from({ length }, () => String.fromCharCode(32 + Math.floor(next() * 95))).join('');
      expect(smallSha256Hex(text), `length ${length}`).toBe(expected(text));
    }
    for (const piece of PIECES) {
      for (let pad = 50; pad <= 66; pad++) {
        const text = `${'x'.repeat(pad)}${piece}`;
        expect(smallSha256Hex(text), `${pad} + ${JSON.stringify(piece)}`).toBe(expected(text));
      }
    }
    // A long text after short ones and a short one after it: the reused scratch buffer holds nothing over.
    for (let i = 0; i < 300; i++) {
      const text = randomText(next, Math.floor(next() * (next() < 0.9 ? 400 : 9000)));
      expect(smallSha256Hex(text), `case ${i}`).toBe(expected(text));
    }
  });

  it('agrees with node:crypto at every length 0..300 (the padding’s 55/56, 63/64, 119/120 included)', () => {
    const next = random(1);
    for (let length = 0; length <= 300; length++) {
      const text = Array.from({ length }, () => String.fromCharCode(32 + Math.floor(next() * 95))).join('');
      expect(wasmSha256Hex(text), `length ${length}`).toBe(expected(text));
      expect(sha256Hex(text), `length ${length}`).toBe(expected(text));
    }
  });

  it('hashes the UTF-8 of multi-byte characters, and a lone surrogate as U+FFFD, as node:crypto and TextEncoder do', () => {
    const replacement = hash('sha256', Buffer.from([0xef, 0xbf, 0xbd]), 'hex');
    for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff']) {
      expect(wasmSha256Hex(lone)).toBe(replacement);
      expect(expected(lone)).toBe(replacement);
    }
    expect(wasmSha256Hex('\udc00\ud800')).toBe(hash('sha256', Buffer.from([0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd]), 'hex'));
    expect(wasmSha256Hex('😀')).toBe(hash('sha256', Buffer.from([0xf0, 0x9f, 0x98, 0x80]), 'hex'));
    // Each width at each byte offset around the 56- and 64-byte boundaries.
    for (const piece of PIECES) {
      for (let pad = 50; pad <= 66; pad++) {
        const text = `${'x'.repeat(pad)}${piece}`;
        expect(wasmSha256Hex(text), `${pad} + ${JSON.stringify(piece)}`).toBe(expected(text));
      }
    }
  });

  it('takes a string past the module’s input chunk in pieces, never splitting a character at a chunk’s end', () => {
    for (const piece of PIECES) {
      for (let pad = INPUT_CHUNK - 4; pad <= INPUT_CHUNK + 1; pad++) {
        const text = `${'y'.repeat(pad)}${piece}${'z'.repeat(70)}`;
        expect(wasmSha256Hex(text), `${pad} + ${JSON.stringify(piece)}`).toBe(expected(text));
      }
    }
    for (const length of [INPUT_CHUNK - 1, INPUT_CHUNK, INPUT_CHUNK + 1, 2 * INPUT_CHUNK + 63, 200_000]) {
      const text = 'q'.repeat(length);
      expect(wasmSha256Hex(text), `length ${length}`).toBe(expected(text));
    }
    // Long multi-byte text: 1–4 bytes a character, so the chunks end at every kind of character.
    const next = random(2);
    for (let i = 0; i < 6; i++) {
      const text = randomText(next, 40_000 + Math.floor(next() * 200_000));
      expect(wasmSha256Hex(text)).toBe(expected(text));
    }
  });

  it('agrees with node:crypto on random text, before and after the switch to node:crypto (seeded)', () => {
    for (const seed of [3, 4, 5]) {
      const next = random(seed);
      for (let i = 0; i < 700; i++) {
        const text = randomText(next, Math.floor(next() * (next() < 0.9 ? 400 : 5000)));
        expect(wasmSha256Hex(text), `seed ${seed}, case ${i}`).toBe(expected(text));
        expect(sha256Hex(text), `seed ${seed}, case ${i}`).toBe(expected(text));
      }
    }
  });

  it('hashes the same however a process’s hashing is split: plain JavaScript, then the kernel, then node:crypto, or told beforehand', () => {
    // Each order in a process of its own (the module's switches are per process): no hint, a hint past the plain
    // JavaScript's share (the kernel at once), a hint past the kernel's (node:crypto at once), and a hint of a few.
    const code = bundledModule(new URL('../../../src/shared/sha256.ts', import.meta.url));
    const next = random(7);
    const texts = Array.from({ length: 160 }, () => randomText(next, 20 + Math.floor(next() * 600)));
    for (const hint of [0, 5_000, 40_000, 300]) {
      const script = `const module = { exports: {} }; (function (exports, module, require) { ${code} })(module.exports, module, require);
        const { sha256Hex, expectHashUnits } = module.exports;
        if (${hint} > 0) expectHashUnits(${hint});
        process.stdout.write(JSON.stringify(${JSON.stringify(texts)}.map(sha256Hex)));`;
      const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(JSON.parse(out), `hint ${hint}`).toEqual(texts.map(expected));
    }
  });

  it('without WebAssembly (node --jitless) the plain JavaScript answers the same, at every length', () => {
    // The module as the bundle has it, run by a Node whose V8 has no WebAssembly.
    const code = bundledModule(new URL('../../../src/shared/sha256.ts', import.meta.url));
    const texts = ['', 'abc', 'x'.repeat(119), '😀\ud800é', 'w'.repeat(70_000)];
    const script = `const module = { exports: {} }; (function (exports, module) { ${code} })(module.exports, module);
      const { sha256Hex, wasmSha256Hex } = module.exports;
      const texts = ${JSON.stringify(texts)};
      process.stdout.write(JSON.stringify([typeof WebAssembly, texts.map(wasmSha256Hex), texts.map(sha256Hex)]));`;
    const out = execFileSync(process.execPath, ['--jitless', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(JSON.parse(out)).toEqual(['undefined', texts.map(expected), texts.map(expected)]);
  });
});
