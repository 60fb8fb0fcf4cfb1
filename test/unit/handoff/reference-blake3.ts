// An independent BLAKE3 for the tests: blake3-wasm, the BLAKE3 team's Rust crate (the code b3sum runs) built to
// WebAssembly, where crux hashes with @noble/hashes (JavaScript). It needs nothing but Node; the tests that cross it
// with the b3sum command itself (crypto.test.ts) run where b3sum is installed, and always in CI.
import { deriveKey, hash, keyedHash } from 'blake3-wasm';

/** Hex BLAKE3 of `input`. */
export const b3hash = (input: Uint8Array): string => Buffer.from(hash(input) as Buffer).toString('hex');
/** Hex keyed BLAKE3 of `input` with a 32-byte key. */
export const b3keyed = (key: Uint8Array, input: Uint8Array): string => keyedHash(Buffer.from(key), input).toString('hex');
/** Hex BLAKE3 derive-key of key material `input` with `context`. */
export const b3derive = (context: string, input: Uint8Array): string => deriveKey(context, input).toString('hex');
/** Raw 32 bytes of BLAKE3 of `input` (for keys). */
export const b3raw = (input: Uint8Array): Uint8Array => new Uint8Array(hash(input) as Buffer);
