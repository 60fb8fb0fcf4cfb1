// The store key (SPEC §13): its text, its id, and the file it is read from (a file others may read is refused, 5).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyIdOf, keyNeeded, newStoreKey, parseStoreKey } from '../../src/shared/store-key';
import { readStoreKeyFile, storeKeyFrom } from '../../src/cli/key-file';
import type { CruxError } from '../../src/shared/errors';
import { tempDir } from '../helpers/cli';

const caught = (fn: () => unknown): CruxError => {
  try {
    fn();
  } catch (error) {
    return error as CruxError;
  }
  throw new Error('expected a refusal');
};

function keyFile(text: string, mode = 0o600): string {
  const path = join(tempDir(), 'store.key');
  fs.writeFileSync(path, text, { mode });
  fs.chmodSync(path, mode);
  return path;
}

describe('store key', () => {
  it('is crux-key-v1: and 32 random bytes in base64url, with an id derived from them', () => {
    const a = newStoreKey();
    const b = newStoreKey();
    expect(a.text).toMatch(/^crux-key-v1:[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.text.slice('crux-key-v1:'.length), 'base64url')).toHaveLength(32);
    expect(a.text).not.toBe(b.text);
    expect(a.id).toMatch(/^k-[0-9a-f]{16}$/);
    const parsed = parseStoreKey(`${a.text}\n`, 'x');
    expect(parsed.id).toBe(a.id);
    expect(keyIdOf(parsed.bytes)).toBe(a.id);
  });

  it('refuses text that is not a key without repeating it', () => {
    for (const text of ['', 'crux-key-v1:short', 'crux-key-v2:tEtsPJWy8BrkNttAU2JUNFOWECz63mMYBnSne7fNMF0', 'tEtsPJWy8BrkNttAU2JUNFOWECz63mMYBnSne7fNMF0']) {
      const error = caught(() => parseStoreKey(text, 'the key file k'));
      expect(error.exitCode).toBe(5);
      if (text !== '') expect(error.message).not.toContain(text);
    }
  });

  it('reads a key file of mode 0600, and refuses one others may read (5) naming the file, never the key', () => {
    const key = newStoreKey();
    expect(readStoreKeyFile(keyFile(key.text), '--key-file').id).toBe(key.id);
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      const path = keyFile(key.text, mode);
      const error = caught(() => readStoreKeyFile(path, '--key-file'));
      expect(error.exitCode).toBe(5);
      expect(error.message).toContain(path);
      expect(`${error.message} ${error.hint}`).not.toContain(key.text.slice(12));
      expect(error.hint).toBe(`chmod 600 ${path}`);
    }
    expect(caught(() => readStoreKeyFile(join(tempDir(), 'none'), '--key-file')).exitCode).toBe(5);
  });

  it('--key-file wins over CRUX_KEY_FILE; neither: no key', () => {
    const a = newStoreKey();
    const b = newStoreKey();
    const fa = keyFile(a.text);
    const fb = keyFile(b.text);
    expect(storeKeyFrom(fa, { CRUX_KEY_FILE: fb })?.id).toBe(a.id);
    expect(storeKeyFrom(undefined, { CRUX_KEY_FILE: fb })?.id).toBe(b.id);
    expect(storeKeyFrom(undefined, {})).toBeUndefined();
  });

  it('the refusal of an encrypted store is exit 6 naming the key id it needs', () => {
    const given = parseStoreKey(newStoreKey().text, 'x');
    const error = keyNeeded('k-0123456789abcdef', given);
    expect(error.exitCode).toBe(6);
    expect(error.message).toContain('k-0123456789abcdef');
    expect(error.message).toContain(given.id);
    expect(keyNeeded('k-0123456789abcdef', undefined).message).toContain('no key was given');
  });
});
