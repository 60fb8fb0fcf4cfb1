// SHA-256 of a string's UTF-8, as lowercase hex: record lines' hashes (journal/codec/record.ts) and the ids derived
// from content (domain/transcript/stretch.ts). Vetted code only: @noble/hashes' sha256 (audited, plain JavaScript)
// for a process's first few KB, node:crypto past them.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

// node:crypto hashes fastest but costs ~2 ms to load beyond Node's streams (which node:zlib's checksums load
// anyway); a `session get` hashes two lines (the cache binding's head and the record), a put three, where
// @noble/hashes, from the code cache, costs less: measured (CPU, medians of 21 interleaved runs), a get 30.2 ms
// through it against 30.5 ms through node:crypto, a put 37.7 against 39.2. Past NATIVE_AFTER_UNITS UTF-16 units of
// text (a replay, a check, an import) node:crypto is loaded all the same; callers that know beforehand say so
// (expectHashUnits) and load it at once.
const NATIVE_AFTER_UNITS = 32_768;
let hashedUnits = 0;
let native: ((text: string) => string) | undefined;

function loadNative(): (text: string) => string {
  const { hash } = require('node:crypto') as typeof import('node:crypto');
  native = (text) => hash('sha256', text, 'hex');
  return native;
}

/**
 * A caller about to hash `units` UTF-16 units of text in small pieces (the lines of that many bytes of journal):
 * past NATIVE_AFTER_UNITS, node:crypto is loaded now, not after the first NATIVE_AFTER_UNITS of them. An estimate
 * is enough: the answer is the same either way.
 */
export function expectHashUnits(units: number): void {
  if (native === undefined && units > NATIVE_AFTER_UNITS) loadNative();
}

const encoder = new TextEncoder();

/** SHA-256 of `text`'s UTF-8 (a lone surrogate as U+FFFD, as TextEncoder and node:crypto write it), as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  if (native === undefined && (hashedUnits += text.length) > NATIVE_AFTER_UNITS) loadNative();
  if (native !== undefined) return native(text);
  return bytesToHex(sha256(encoder.encode(text)));
}
