// The store key (SPEC §13): `crux-key-v1:` and 32 random bytes, base64url, kept in a file only its owner may read
// (`--key-file` or CRUX_KEY_FILE). Its id names it in the store and in every message; the key itself is never
// printed, not in an error, a warning or a report (a message names the file and the id, never the bytes).
import { CruxError, invalid } from './errors';

const KEY_PREFIX = 'crux-key-v1:';
const KEY_BYTES = 32;

/** A store key: its 32 bytes and its id (`k-` and 16 hex digits of a SHA-256 over the bytes, domain-separated). */
export interface StoreKey {
  readonly id: string;
  readonly bytes: Buffer;
}

const crypto = () => require('node:crypto') as typeof import('node:crypto');

/** The id of a key: a public name for it, from which nothing of the key can be learnt. */
export const keyIdOf = (bytes: Uint8Array): string => `k-${crypto().createHash('sha256').update('crux-key-id-v1\0').update(bytes).digest('hex').slice(0, 16)}`;

/** A new key as `crux key new` prints it: the key text and its id. */
export function newStoreKey(): { text: string; id: string } {
  const bytes = crypto().randomBytes(KEY_BYTES);
  return { text: `${KEY_PREFIX}${bytes.toString('base64url')}`, id: keyIdOf(bytes) };
}

/** Parses a key file's text (one line, surrounding white space ignored); `where` names it in the refusal, never its bytes. */
export function parseStoreKey(text: string, where: string): StoreKey {
  const trimmed = text.trim();
  const body = trimmed.startsWith(KEY_PREFIX) ? trimmed.slice(KEY_PREFIX.length) : undefined;
  const bytes = body !== undefined && /^[A-Za-z0-9_-]{43}$/.test(body) ? Buffer.from(body, 'base64url') : undefined;
  if (bytes === undefined || bytes.length !== KEY_BYTES) {
    throw invalid(`${where} does not hold a crux key (${KEY_PREFIX} and 32 bytes in base64url)`, 'make one with `crux key new`');
  }
  return { id: keyIdOf(bytes), bytes };
}

/** The refusal of a command that needs plaintext of an encrypted store it was not given the key of (exit 6). */
export function keyNeeded(needed: string, given: StoreKey | undefined): CruxError {
  const what = given === undefined ? 'no key was given' : `the key given is ${given.id}`;
  return new CruxError(
    'key_required',
    `the store is encrypted with key ${needed} and ${what}`,
    `nothing was changed; give the key ${needed} with --key-file <file> or CRUX_KEY_FILE`,
  );
}
