// The handoff cryptography: BLAKE3 content hash and keyed MAC (daemon-compatible), key derivation, Ed25519.
import { blake3 } from '@noble/hashes/blake3.js';
import type { KeyObject } from 'node:crypto';
import { invalid } from '../../shared/errors';

// node:crypto is loaded by the first signature or key, not with this module: `crux mcp` and the full program
// import the handoff domain at start, and its loading costs ~3 ms (~13 M instructions) a start.
export const nodeCrypto = () => require('node:crypto') as typeof import('node:crypto');

export const MAC_ALG = 'blake3-mac-v1';
export const ED25519_ALG = 'ed25519';
export const SUPPORTED_ALGS: readonly string[] = [MAC_ALG, ED25519_ALG];
export type SignatureAlg = typeof MAC_ALG | typeof ED25519_ALG;

export const KEY_BYTES = 32;

/**
 * The BLAKE3 derive-key context for CRUX_HANDOFF_SECRET: "[application] [date] [purpose]" as BLAKE3
 * recommends. Fixed forever: changing it would change every key derived from a secret.
 */
export const CRUX_KEY_CONTEXT = 'crux 2026-11-29 handoff blake3-mac-v1 key from CRUX_HANDOFF_SECRET';

const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
const bytesOf = (b: Uint8Array): Uint8Array => (b instanceof Buffer ? new Uint8Array(b.buffer, b.byteOffset, b.length) : b);
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Lowercase hex BLAKE3 of the payload bytes: the envelope's content_hash. */
export function contentHashOf(payload: Uint8Array): string {
  return hex(blake3(bytesOf(payload)));
}

/** blake3-mac-v1: BLAKE3 in keyed mode over the payload bytes, exactly the daemon's compute_mac. */
export function macOf(key: Uint8Array, payload: Uint8Array): Uint8Array {
  if (key.length !== KEY_BYTES) throw new Error(`a handoff key is ${KEY_BYTES} bytes, not ${key.length}`);
  return blake3(bytesOf(payload), { key: bytesOf(key) });
}

/** CRUX_HANDOFF_SECRET → key: BLAKE3 derive-key mode, crux's own context (domain separation). */
export function deriveKeyFromSecret(secret: string): Uint8Array {
  return blake3(utf8(secret), { context: utf8(CRUX_KEY_CONTEXT) });
}

/** CRUX_MCP_HANDOFF_SECRET → key: the bare BLAKE3 hash of the secret, as the daemon derives it (compatibility). */
export function deriveCompatKey(secret: string): Uint8Array {
  return blake3(utf8(secret));
}

/**
 * Equality of two MACs or hashes in time independent of where they differ (crypto.timingSafeEqual).
 * The lengths are public (32 bytes for a MAC), so a length difference answers at once.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return nodeCrypto().timingSafeEqual(a, b);
}

// ---- Ed25519, via node:crypto (native; a pure-JS implementation costs ~100 ms per process) ----

const PUBLIC_KEY_PREFIX = 'ed25519:';

export interface AgentKeyPair {
  /** PKCS#8 PEM, for the 0600 key file. */
  readonly privatePem: string;
  /** `ed25519:<base64 of the 32 raw bytes>`, the form `handoff trust` takes. */
  readonly publicKey: string;
  readonly keyId: string;
}

export function generateAgentKeyPair(): AgentKeyPair {
  const { privateKey, publicKey } = nodeCrypto().generateKeyPairSync('ed25519');
  const raw = rawPublicKey(publicKey);
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicKey: formatPublicKey(raw),
    keyId: keyIdOf(raw),
  };
}

const rawPublicKey = (key: KeyObject): Uint8Array => new Uint8Array(Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url'));
const formatPublicKey = (raw: Uint8Array): string => `${PUBLIC_KEY_PREFIX}${Buffer.from(raw).toString('base64')}`;

/** A key id: 16 hex digits of BLAKE3 over the raw public key; it travels inside the signed package. */
export function keyIdOf(rawPublic: Uint8Array): string {
  return hex(blake3(bytesOf(rawPublic))).slice(0, 16);
}

/** Parses `ed25519:<base64>` (or bare base64) of 32 raw bytes; returns the canonical text and key id. */
export function parsePublicKey(text: string): { publicKey: string; keyId: string; raw: Uint8Array } {
  const body = text.trim().startsWith(PUBLIC_KEY_PREFIX) ? text.trim().slice(PUBLIC_KEY_PREFIX.length) : text.trim();
  const raw = /^[A-Za-z0-9+/]{43}=$/.test(body) ? new Uint8Array(Buffer.from(body, 'base64')) : undefined;
  if (raw === undefined || raw.length !== 32) {
    throw invalid(`not an Ed25519 public key: ${JSON.stringify(text.slice(0, 80))}`, 'give the `ed25519:…` text that `crux handoff keygen` printed');
  }
  return { publicKey: formatPublicKey(raw), keyId: keyIdOf(raw), raw };
}

/** The public key (canonical text and id) of a PKCS#8 PEM private key. */
export function publicKeyOfPrivate(privatePem: string): { publicKey: string; keyId: string } {
  const { createPrivateKey, createPublicKey } = nodeCrypto();
  const raw = rawPublicKey(createPublicKey(createPrivateKey(privatePem)));
  return { publicKey: formatPublicKey(raw), keyId: keyIdOf(raw) };
}

export function signEd25519(privatePem: string, payload: Uint8Array): Uint8Array {
  const { createPrivateKey, sign } = nodeCrypto();
  return new Uint8Array(sign(null, payload, createPrivateKey(privatePem)));
}

export function verifyEd25519(publicKey: string, payload: Uint8Array, signature: Uint8Array): boolean {
  const { raw } = parsePublicKey(publicKey);
  const { createPublicKey, verify } = nodeCrypto();
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
  if (signature.length !== 64) return false;
  return verify(null, payload, key, signature);
}
