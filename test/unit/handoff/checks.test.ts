import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, verifyPackage, type CheckContext } from '../../../src/domain/handoff/checks';
import { deriveCompatKey, generateAgentKeyPair } from '../../../src/domain/handoff/crypto';
import { decodeEnvelope, encodeEnvelope, MAX_ENVELOPE_BYTES, type Envelope } from '../../../src/domain/handoff/envelope';
import { mintPackage, type MintInput } from '../../../src/domain/handoff/mint';
import { b3hash, b3keyed, b3raw } from './reference-blake3';

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const T0 = Date.UTC(2026, 10, 29, 21);
const HOUR = 3_600_000;
const KEY = new Uint8Array(32).fill(7);

const ctx = (over: Partial<CheckContext> = {}): CheckContext => ({
  macKey: { key: KEY, source: 'test key' },
  trustedKeys: () => [],
  revokedKeys: () => [],
  receiver: 'bob',
  now: T0 + HOUR,
  maxAgeMs: 24 * HOUR,
  consumed: () => false,
  strict: true,
  ...over,
});

const mintInput = (over: Partial<MintInput> = {}): MintInput => ({
  sessionId: 's1',
  state: '{"step":3,"refs":["w_1"]}',
  source: 'alice',
  target: 'bob',
  message: 'over to you https://u:secret@example.com/x',
  taskRecord: undefined,
  facts: [],
  handoffId: 'h_test',
  now: T0,
  ttlMs: 2 * HOUR,
  signer: { alg: 'blake3-mac-v1', key: KEY },
  ...over,
});

const received = (e: Envelope) => decodeEnvelope(enc(encodeEnvelope(e)));
const statuses = (v: ReturnType<typeof verifyPackage>) => Object.fromEntries(CHECK_NAMES.map((n) => [n, v.checks[n].status]));

describe('a minted package', () => {
  const minted = mintPackage(mintInput());

  it('verifies with the reference BLAKE3: content hash and keyed MAC over the payload bytes', () => {
    expect(b3hash(minted.payload)).toBe(minted.envelope.content_hash);
    expect(Buffer.from(b3keyed(KEY, minted.payload), 'hex').toString('base64')).toBe(minted.envelope.signature_b64);
    expect(Buffer.from(minted.envelope.payload_b64, 'base64')).toEqual(Buffer.from(minted.payload));
  });

  it('carries handoff_id and expires_at, a scrubbed message, the work ids', () => {
    const text = Buffer.from(minted.payload).toString('utf8');
    expect(text).toMatch(/"work_ids":\["w_1"\],"handoff_id":"h_test","expires_at":"2026-11-29T23:00:00.000Z"\}$/);
    expect(text).toContain('"message":"over to you https://example.com/x"');
    expect(text).not.toContain('secret');
  });

  it('passes every check', () => {
    const v = verifyPackage(received(minted.envelope), ctx());
    expect(statuses(v)).toEqual({
      algorithm: 'ok',
      content_hash: 'ok',
      signature: 'ok',
      payload: 'ok',
      target: 'ok',
      expiry: 'ok',
      replay: 'ok',
      daemon_compatible: 'ok',
    });
    expect(v.failure).toBeUndefined();
    expect(v.expiresAt).toBe(T0 + 2 * HOUR);
  });

  it('reports a state the daemon could not read as daemon_compatible: failed, without refusing it', () => {
    const odd = mintPackage(mintInput({ state: '{"n":1e400}' }));
    expect(odd.daemonIncompatible).toMatch(/the number 1e400 is out of the range of an f64/);
    expect(minted.daemonIncompatible).toBeUndefined();
    const v = verifyPackage(received(odd.envelope), ctx());
    expect(v.checks.daemon_compatible).toEqual({ status: 'failed', detail: odd.daemonIncompatible });
    expect(v.failure).toBeUndefined();
  });
});

describe('each check fails with its code, in SPEC order', () => {
  const minted = mintPackage(mintInput());
  const e = minted.envelope;
  const failureOf = (env: Envelope, over: Partial<CheckContext> = {}) => {
    const v = verifyPackage(received(env), ctx(over));
    return { code: v.failure?.exitCode, first: CHECK_NAMES.find((n) => v.checks[n].status === 'failed'), message: v.failure?.message };
  };

  it('algorithm (6)', () => {
    expect(failureOf({ ...e, signature_alg: 'hmac-sha256' })).toMatchObject({ code: 6, first: 'algorithm' });
  });

  it('content hash (6): a payload byte changed, or the hash', () => {
    const payload = Buffer.from(e.payload_b64, 'base64');
    payload[payload.indexOf('3')] = '4'.charCodeAt(0);
    expect(failureOf({ ...e, payload_b64: payload.toString('base64') })).toMatchObject({ code: 6, first: 'content_hash' });
    expect(failureOf({ ...e, content_hash: e.content_hash.replace(/^./, (c) => (c === '0' ? '1' : '0')) })).toMatchObject({ code: 6, first: 'content_hash' });
    expect(failureOf({ ...e, content_hash: e.content_hash.toUpperCase() })).toMatchObject({ code: 6, first: 'content_hash' });
  });

  it('MAC (6): a tampered payload with a recomputed hash, a changed MAC, another key', () => {
    const payload = Buffer.from(Buffer.from(e.payload_b64, 'base64').toString().replace('"step":3', '"step":4'));
    const forged = { ...e, payload_b64: payload.toString('base64'), content_hash: b3hash(payload) };
    expect(failureOf(forged)).toMatchObject({ code: 6, first: 'signature' });
    const mac = Buffer.from(e.signature_b64, 'base64');
    mac[0] = mac[0]! ^ 1;
    expect(failureOf({ ...e, signature_b64: mac.toString('base64') })).toMatchObject({ code: 6, first: 'signature' });
    expect(failureOf(e, { macKey: { key: new Uint8Array(32), source: 'other key' } })).toMatchObject({ code: 6, first: 'signature' });
    expect(failureOf({ ...e, signature_b64: 'not base64!' })).toMatchObject({ code: 6, first: 'signature' });
  });

  it('a forged payload that is not even JSON is a verification failure, not malformed input', () => {
    const payload = enc('garbage');
    expect(failureOf({ ...e, payload_b64: Buffer.from(payload).toString('base64'), content_hash: b3hash(payload) })).toMatchObject({
      code: 6,
      first: 'signature',
    });
  });

  it('target (6)', () => {
    expect(failureOf(e, { receiver: 'mallory' })).toMatchObject({ code: 6, first: 'target' });
  });

  it('expiry (7): after expires_at; exactly at expires_at is still valid', () => {
    expect(failureOf(e, { now: T0 + 2 * HOUR + 1 })).toMatchObject({ code: 7, first: 'expiry' });
    expect(failureOf(e, { now: T0 + 2 * HOUR }).code).toBeUndefined();
  });

  it('replay (8)', () => {
    expect(failureOf(e, { consumed: (h) => h === e.content_hash })).toMatchObject({ code: 8, first: 'replay' });
  });

  it('the first failure wins: wrong target and expired and replayed → 6', () => {
    expect(failureOf(e, { receiver: 'x', now: T0 + 100 * HOUR, consumed: () => true })).toMatchObject({ code: 6, first: 'target' });
    expect(failureOf(e, { now: T0 + 100 * HOUR, consumed: () => true })).toMatchObject({ code: 7 });
  });

  it('no key at hand: accept fails (6), inspect skips', () => {
    expect(failureOf(e, { macKey: undefined })).toMatchObject({ code: 6, first: 'signature' });
    const v = verifyPackage(received(e), ctx({ macKey: undefined, strict: false, receiver: undefined }));
    expect(v.checks.signature.status).toBe('skipped');
    expect(v.checks.target.status).toBe('skipped');
    expect(v.failure).toBeUndefined();
  });
});

describe('a daemon-style package, built independently (reference BLAKE3, CRUX_MCP_HANDOFF_SECRET)', () => {
  const secret = 'shared daemon secret';
  const payload = enc(
    '{"session_id":"task-42","session_state":{"plan":["w_7"],"n":1.0},"facts":[],"created_at":"2026-11-29T21:00:00.123456789+00:00","source_agent":"planner","target_agent":null,"message":null,"work_ids":["w_7"]}',
  );
  const key = b3raw(enc(secret));
  const envelope: Envelope = {
    payload_b64: Buffer.from(payload).toString('base64'),
    content_hash: b3hash(payload),
    signature_b64: Buffer.from(b3keyed(key, payload), 'hex').toString('base64'),
    signature_alg: 'blake3-mac-v1',
  };

  it('verifies with the compat key and expires at created_at + max-age', () => {
    const v = verifyPackage(received(envelope), ctx({ macKey: { key: deriveCompatKey(secret), source: 'compat' }, now: Date.UTC(2026, 10, 30, 20) }));
    expect(v.failure).toBeUndefined();
    expect(v.expiresAt).toBe(Date.UTC(2026, 10, 30, 21, 0, 0, 123));
    expect(v.pkg!.session_state).toBe('{"plan":["w_7"],"n":1.0}');
  });

  it('is expired past created_at + max-age, and a longer --max-age accepts it', () => {
    const late = Date.UTC(2026, 10, 30, 21, 0, 1);
    const compat = { key: deriveCompatKey(secret), source: 'compat' };
    expect(verifyPackage(received(envelope), ctx({ macKey: compat, now: late })).failure?.exitCode).toBe(7);
    expect(verifyPackage(received(envelope), ctx({ macKey: compat, now: late, maxAgeMs: 48 * HOUR })).failure).toBeUndefined();
  });
});

describe('Ed25519 packages', () => {
  const alice = generateAgentKeyPair();
  const minted = mintPackage(mintInput({ signer: { alg: 'ed25519', privatePem: alice.privatePem, keyId: alice.keyId } }));

  it('name the key id in the signed payload', () => {
    expect(Buffer.from(minted.payload).toString()).toContain(`"key_id":"${alice.keyId}"`);
    expect(minted.envelope.signature_alg).toBe('ed25519');
  });

  it('verify against the keyring entry of source_agent, without any MAC key', () => {
    const trusted = (agent: string) => (agent === 'alice' ? [{ public_key: alice.publicKey, key_id: alice.keyId }] : []);
    const v = verifyPackage(received(minted.envelope), ctx({ macKey: undefined, trustedKeys: trusted }));
    expect(v.failure).toBeUndefined();
    expect(v.checks.signature.detail).toContain('alice');
  });

  it('an untrusted agent, a wrong key, or a damaged signature fail with 6', () => {
    expect(verifyPackage(received(minted.envelope), ctx()).failure?.exitCode).toBe(6);
    const other = generateAgentKeyPair();
    const wrong = () => [{ public_key: other.publicKey, key_id: other.keyId }];
    const v = verifyPackage(received(minted.envelope), ctx({ trustedKeys: wrong }));
    expect(v.failure?.exitCode).toBe(6);
    expect(v.failure?.message).toContain('not trusted');
    // the right key id but other key bytes: the signature itself must fail
    const impostor = () => [{ public_key: other.publicKey, key_id: alice.keyId }];
    expect(verifyPackage(received(minted.envelope), ctx({ trustedKeys: impostor })).checks.signature.status).toBe('failed');
  });

  it('a key revoked here fails with 6, in accept and in inspect, whatever else is trusted', () => {
    const aliceKey = [{ public_key: alice.publicKey, key_id: alice.keyId }];
    const other = generateAgentKeyPair();
    for (const strict of [true, false]) {
      for (const trustedKeys of [() => [], () => [{ public_key: other.publicKey, key_id: other.keyId }]]) {
        const v = verifyPackage(
          received(minted.envelope),
          ctx({ macKey: undefined, trustedKeys, revokedKeys: (a) => (a === 'alice' ? aliceKey : []), strict }),
        );
        expect(v.checks.signature).toEqual({ status: 'failed', detail: expect.stringContaining(`key ${alice.keyId}, which was revoked here`) });
        expect(v.failure?.exitCode).toBe(6);
      }
    }
    // Another agent's revocation of the same key bytes does not touch alice's packages.
    const v = verifyPackage(received(minted.envelope), ctx({ trustedKeys: () => aliceKey, revokedKeys: (a) => (a === 'mallory' ? aliceKey : []) }));
    expect(v.failure).toBeUndefined();
  });
});

describe('mint refuses a package no receiver would read', () => {
  it('the printed envelope (with its newline) fits in 8 MiB, or mint is refused with 5 before the key is fetched', () => {
    const sized = (n: number, key: () => Uint8Array) => mintInput({ state: JSON.stringify({ pad: 'x'.repeat(n) }), signer: { alg: 'blake3-mac-v1', key } });
    const small = mintPackage(sized(0, () => KEY));
    const overhead = encodeEnvelope(small.envelope).length - small.envelope.payload_b64.length + 1;
    // The longest payload whose envelope line fits: base64 grows 4 characters per 3 bytes.
    const n = 3 * Math.floor((MAX_ENVELOPE_BYTES - overhead) / 4) - small.payload.length;
    const fits = mintPackage(sized(n, () => KEY));
    const line = `${encodeEnvelope(fits.envelope)}\n`;
    expect(line.length).toBeLessThanOrEqual(MAX_ENVELOPE_BYTES);
    expect(Buffer.from(decodeEnvelope(enc(line)).payload).equals(Buffer.from(fits.payload))).toBe(true); // toEqual walks 6 MB element by element (~18 s)
    let fetched = false;
    const tooBig = () => mintPackage(sized(n + 1, () => ((fetched = true), KEY)));
    expect(tooBig).toThrow(expect.objectContaining({ kind: 'invalid_input', message: expect.stringMatching(/over the limit of 8388608 \(8 MiB\)/) }));
    expect(fetched).toBe(false);
  });
});

describe('decodeEnvelope: bad input is exit 5', () => {
  const e = mintPackage(mintInput()).envelope;
  const code = (input: Uint8Array) => {
    try {
      decodeEnvelope(input);
      return 0;
    } catch (error) {
      return (error as { exitCode: number }).exitCode;
    }
  };

  it.each([
    ['not JSON', enc('hello')],
    ['empty', enc('  \n')],
    ['an array', enc('[]')],
    ['missing fields', enc(JSON.stringify({ payload_b64: e.payload_b64 }))],
    ['a number field', enc(JSON.stringify({ ...e, content_hash: 5 }))],
    ['payload not base64', enc(JSON.stringify({ ...e, payload_b64: 'a$b=' }))],
    ['payload without padding', enc(JSON.stringify({ ...e, payload_b64: 'QQ' }))],
    ['payload with padding inside', enc(JSON.stringify({ ...e, payload_b64: 'QQ==QUFB' }))],
    ['payload with three =', enc(JSON.stringify({ ...e, payload_b64: 'Q===' }))],
    ['payload with non-canonical trailing bits', enc(JSON.stringify({ ...e, payload_b64: 'QR==' }))],
    ['payload in URL-safe base64', enc(JSON.stringify({ ...e, payload_b64: '-_-_' }))],
    ['not UTF-8', new Uint8Array([0xff, 0xfe])],
  ])('%s', (_name, input) => {
    expect(code(input)).toBe(5);
  });

  it('refuses more than 8 MiB before decoding', () => {
    const big = new Uint8Array(MAX_ENVELOPE_BYTES + 1).fill(0x20);
    expect(() => decodeEnvelope(big)).toThrow(/over the limit/);
  });

  it('decodes a payload of several MB (the strict base64 check must not overflow the stack)', () => {
    const payload = Buffer.alloc(5_500_000, 'x'); // 7.3 MB of base64, under the 8 MiB limit
    const big = { ...e, payload_b64: payload.toString('base64') };
    expect(Buffer.from(decodeEnvelope(enc(encodeEnvelope(big))).payload).equals(payload)).toBe(true);
  });

  it('takes surrounding whitespace (a file with a newline)', () => {
    expect(code(enc(`${encodeEnvelope(e)}\n`))).toBe(0);
  });
});
