import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { blake3 } from '@noble/hashes/blake3.js';
import {
  constantTimeEqual,
  contentHashOf,
  CRUX_KEY_CONTEXT,
  deriveCompatKey,
  deriveKeyFromSecret,
  generateAgentKeyPair,
  keyIdOf,
  macOf,
  parsePublicKey,
  publicKeyOfPrivate,
  signEd25519,
  verifyEd25519,
} from '../../../src/domain/handoff/crypto';
import { titled, toolsSkipReason } from '../../helpers/tools';
import { b3derive, b3hash, b3keyed } from './reference-blake3';

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const input = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

// The official BLAKE3 test vectors (BLAKE3-team/BLAKE3 test_vectors/test_vectors.json), first 32 bytes of each.
const VECTOR_KEY = enc('whats the Elvish word for friend');
const VECTOR_CONTEXT = 'BLAKE3 2019-12-27 16:29:52 test vectors context';
const VECTORS: [number, string, string, string][] = [
  [
    0,
    'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    '92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26',
    '2cc39783c223154fea8dfb7c1b1660f2ac2dcbd1c1de8277b0b0dd39b7e50d7d',
  ],
  [
    1,
    '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213',
    '6d7878dfff2f485635d39013278ae14f1454b8c0a3a2d34bc1ab38228a80c95b',
    'b3e2e340a117a499c6cf2398a19ee0d29cca2bb7404c73063382693bf66cb06c',
  ],
  [
    63,
    'e9bc37a594daad83be9470df7f7b3798297c3d834ce80ba85d6e207627b7db7b',
    'bb1eb5d4afa793c1ebdd9fb08def6c36d10096986ae0cfe148cd101170ce37ae',
    'b6451e30b953c206e34644c6803724e9d2725e0893039cfc49584f991f451af3',
  ],
  [
    64,
    '4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98',
    'ba8ced36f327700d213f120b1a207a3b8c04330528586f414d09f2f7d9ccb7e6',
    'a5c4a7053fa86b64746d4bb688d06ad1f02a18fce9afd3e818fefaa7126bf73e',
  ],
  [
    65,
    'de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee',
    'c0a4edefa2d2accb9277c371ac12fcdbb52988a86edc54f0716e1591b4326e72',
    '51fd05c3c1cfbc8ed67d139ad76f5cf8236cd2acd26627a30c104dfd9d3ff8a8',
  ],
  [
    1023,
    '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11',
    'c951ecdf03288d0fcc96ee3413563d8a6d3589547f2c2fb36d9786470f1b9d6e',
    '74a16c1c3d44368a86e1ca6df64be6a2f64cce8f09220787450722d85725dea5',
  ],
  [
    1024,
    '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7',
    '75c46f6f3d9eb4f55ecaaee480db732e6c2105546f1e675003687c31719c7ba4',
    '7356cd7720d5b66b6d0697eb3177d9f8d73a4a5c5e968896eb6a689684302706',
  ],
  [
    1025,
    'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444',
    '357dc55de0c7e382c900fd6e320acc04146be01db6a8ce7210b7189bd664ea69',
    'effaa245f065fbf82ac186839a249707c3bddf6d3fdda22d1b95a3c970379bcb',
  ],
  [
    2048,
    'e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a',
    '879cf1fa2ea0e79126cb1063617a05b6ad9d0b696d0d757cf053439f60a99dd1',
    '7b2945cb4fef70885cc5d78a87bf6f6207dd901ff239201351ffac04e1088a23',
  ],
  [
    3072,
    'b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2',
    '044a0e7b172a312dc02a4c9a818c036ffa2776368d7f528268d2e6b5df191770',
    '050df97f8c2ead654d9bb3ab8c9178edcd902a32f8495949feadcc1e0480c46b',
  ],
  [
    102400,
    'bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085',
    '1c35d1a5811083fd7119f5d5d1ba027b4d01c0c6c49fb6ff2cf75393ea5db4a7',
    '4652cff7a3f385a6103b5c260fc1593e13c778dbe608efb092fe7ee69df6e9c6',
  ],
];

describe('BLAKE3: the official test vectors', () => {
  it.each(VECTORS)('input of %i bytes: hash, keyed hash, derive-key', (n, hash, keyed, derived) => {
    expect(contentHashOf(input(n))).toBe(hash);
    expect(hex(macOf(VECTOR_KEY, input(n)))).toBe(keyed);
    expect(hex(blake3(input(n), { context: enc(VECTOR_CONTEXT) }))).toBe(derived);
  });

  it('the reference BLAKE3 agrees with the vectors (the independent implementation is itself sound)', () => {
    for (const [n, hash, keyed, derived] of VECTORS.filter(([n]) => n === 1025 || n === 0)) {
      expect(b3hash(input(n))).toBe(hash);
      expect(b3keyed(VECTOR_KEY, input(n))).toBe(keyed);
      expect(b3derive(VECTOR_CONTEXT, input(n))).toBe(derived);
    }
  });
});

describe("BLAKE3 against an independent implementation (blake3-wasm: the BLAKE3 team's crate, as b3sum runs it)", () => {
  const payloads = [enc(''), enc('{"session_id":"s"}'), enc('é ✓ 🚀'), new Uint8Array(Buffer.alloc(70_000, 7))];

  it('content hashes match', () => {
    for (const p of payloads) expect(contentHashOf(p)).toBe(b3hash(p));
  });

  it('MACs match the keyed mode', () => {
    const key = new Uint8Array(32).map((_, i) => (i * 37 + 11) & 0xff);
    for (const p of payloads) expect(hex(macOf(key, p))).toBe(b3keyed(key, p));
  });

  it("CRUX_HANDOFF_SECRET derives with the derive-key mode and crux's context", () => {
    const secret = 'correct horse battery staple';
    expect(hex(deriveKeyFromSecret(secret))).toBe(b3derive(CRUX_KEY_CONTEXT, enc(secret)));
  });

  it('CRUX_MCP_HANDOFF_SECRET is the bare BLAKE3 of the secret bytes, as the daemon derives it', () => {
    const secret = 'daemon shared secret';
    expect(hex(deriveCompatKey(secret))).toBe(b3hash(enc(secret)));
    // and the two modes never give the same key for the same secret (domain separation)
    expect(hex(deriveKeyFromSecret(secret))).not.toBe(hex(deriveCompatKey(secret)));
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => macOf(new Uint8Array(31), enc('x'))).toThrow(/32 bytes/);
  });
});

describe('the reference BLAKE3 needs nothing but Node', () => {
  it('hashes, MACs and derives with no program on PATH (a machine with only Node and npm)', () => {
    const path = process.env.PATH;
    process.env.PATH = '';
    try {
      expect(b3hash(enc('abc'))).toBe('6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85');
      expect(b3keyed(VECTOR_KEY, input(1))).toBe(VECTORS.find(([n]) => n === 1)![2]);
      expect(b3derive(VECTOR_CONTEXT, input(1))).toBe(VECTORS.find(([n]) => n === 1)![3]);
    } finally {
      process.env.PATH = path;
    }
  });
});

// b3sum, the BLAKE3 team's command, where it is installed (always in CI): the reference agrees with it too.
const noB3sum = toolsSkipReason('b3sum');
describe.skipIf(noB3sum !== undefined)(titled('the b3sum command', noB3sum), () => {
  const b3sum = (args: string[], data: Uint8Array, stdin?: Uint8Array): string => {
    const dir = mkdtempSync(join(tmpdir(), 'crux-b3-'));
    try {
      writeFileSync(join(dir, 'input'), data);
      return execFileSync('b3sum', [...args, '--no-names', join(dir, 'input')], { input: stdin, encoding: 'utf8' }).trim();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('agrees with the vectors and with crux: hash, --keyed, --derive-key', () => {
    for (const [n, hash, keyed, derived] of VECTORS.filter(([n]) => n === 1025 || n === 0)) {
      expect(b3sum([], input(n))).toBe(hash);
      expect(b3sum(['--keyed'], input(n), VECTOR_KEY)).toBe(keyed);
      expect(b3sum(['--derive-key', VECTOR_CONTEXT], input(n))).toBe(derived);
    }
    const secret = 'correct horse battery staple';
    expect(hex(deriveKeyFromSecret(secret))).toBe(b3sum(['--derive-key', CRUX_KEY_CONTEXT], enc(secret)));
  });
});

describe('constant-time comparison', () => {
  // Every MAC comparison must go through crypto.timingSafeEqual: a spy on node:crypto's own function, which
  // crypto.ts requires on first use (a built-in module is one object however it is required).
  const nodeCrypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  let timingSafeEqual: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    timingSafeEqual = vi.spyOn(nodeCrypto, 'timingSafeEqual');
  });
  afterEach(() => {
    timingSafeEqual.mockRestore();
  });

  it('goes through crypto.timingSafeEqual', () => {
    const a = macOf(new Uint8Array(32), enc('a'));
    expect(constantTimeEqual(a, new Uint8Array(a))).toBe(true);
    const b = new Uint8Array(a);
    b[31] = b[31]! ^ 1;
    expect(constantTimeEqual(a, b)).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });

  it('answers a length mismatch without comparing (lengths are public)', () => {
    expect(constantTimeEqual(new Uint8Array(32), new Uint8Array(31))).toBe(false);
    expect(timingSafeEqual).not.toHaveBeenCalled();
  });
});

describe('Ed25519', () => {
  it('signs and verifies; another key, another payload or a damaged signature fail', () => {
    const a = generateAgentKeyPair();
    const b = generateAgentKeyPair();
    const payload = enc('{"session_id":"s"}');
    const sig = signEd25519(a.privatePem, payload);
    expect(sig.length).toBe(64);
    expect(verifyEd25519(a.publicKey, payload, sig)).toBe(true);
    expect(verifyEd25519(b.publicKey, payload, sig)).toBe(false);
    expect(verifyEd25519(a.publicKey, enc('{"session_id":"t"}'), sig)).toBe(false);
    const bad = new Uint8Array(sig);
    bad[0] = bad[0]! ^ 1;
    expect(verifyEd25519(a.publicKey, payload, bad)).toBe(false);
    expect(verifyEd25519(a.publicKey, payload, sig.slice(0, 63))).toBe(false);
  });

  it('public keys: canonical text, id from the raw bytes, recoverable from the private key', () => {
    const a = generateAgentKeyPair();
    expect(a.publicKey).toMatch(/^ed25519:[A-Za-z0-9+/]{43}=$/);
    const parsed = parsePublicKey(a.publicKey);
    expect(parsed.keyId).toBe(a.keyId);
    expect(keyIdOf(parsed.raw)).toBe(contentHashOf(parsed.raw).slice(0, 16));
    expect(parsePublicKey(a.publicKey.slice('ed25519:'.length)).publicKey).toBe(a.publicKey);
    expect(publicKeyOfPrivate(a.privatePem)).toEqual({ publicKey: a.publicKey, keyId: a.keyId });
  });

  it('refuses text that is not a 32-byte key', () => {
    expect(() => parsePublicKey('ed25519:abc')).toThrow(/not an Ed25519 public key/);
    expect(() => parsePublicKey(`ed25519:${Buffer.alloc(33).toString('base64')}`)).toThrow(/not an Ed25519 public key/);
  });
});
