// Which key a store is encrypted with, as both engines keep it (core/store-key.ts): the item's bytes and their
// parse, and what a store is to an invocation given a key or none.
import { describe, expect, it } from 'vitest';
import { keyIgnored, needsRecords, parseStoreKeyMark, recordedMode, storeKeyMarkText, writeSealing } from '../../../src/journal/core/store-key';
import { keyIdOf, type StoreKey } from '../../../src/shared/store-key';
import { CruxError } from '../../../src/shared/errors';

const key = (n: number): StoreKey => {
  const bytes = Buffer.alloc(32, n);
  return { id: keyIdOf(bytes), bytes };
};

describe('the store-key item', () => {
  it('holds the key id and the cipher, and reads back as the id (bytes or text)', () => {
    const k = key(1);
    const text = storeKeyMarkText(k.id);
    expect(JSON.parse(text)).toEqual({ key_id: k.id, cipher: 'aes-256-gcm' });
    expect(text.endsWith('\n')).toBe(true);
    expect(parseStoreKeyMark(Buffer.from(text), 'w', 'f')).toBe(k.id);
    expect(parseStoreKeyMark(text, 'w', 'f')).toBe(k.id);
    expect(parseStoreKeyMark(undefined, 'w', 'f')).toBeUndefined();
  });

  it('refuses an item that names no key id (exit 5), naming where it is and how to fix it', () => {
    for (const bad of ['{', '{"key_id":"k-12"}', '{"cipher":"aes-256-gcm"}', 'null', '{"key_id":"k-0123456789abcdeG"}']) {
      let caught: unknown;
      try {
        parseStoreKeyMark(bad, 'keys/store-key.json', 'restore it');
      } catch (error) {
        caught = error;
      }
      expect(caught, bad).toBeInstanceOf(CruxError);
      expect((caught as CruxError).exitCode).toBe(5);
      expect((caught as CruxError).message).toBe('keys/store-key.json does not name a key id');
      expect((caught as CruxError).hint).toBe('restore it');
    }
  });
});

describe('what a store is to an invocation', () => {
  const [k1, k2] = [key(1), key(2)];

  it('a store that records a key id: sealing with that key, locked without it or with another', () => {
    expect(recordedMode(k1.id, k1)).toEqual({ kind: 'sealing', key: k1 });
    expect(recordedMode(k1.id, k2)).toEqual({ kind: 'locked', keyId: k1.id });
    expect(recordedMode(k1.id, undefined)).toEqual({ kind: 'locked', keyId: k1.id });
    expect(recordedMode(undefined, k1)).toEqual({ kind: 'plain' });
    for (const given of [k1, k2, undefined]) {
      expect(needsRecords(k1.id, given)).toBe(false);
      expect(writeSealing(k1.id, given, true)).toEqual({ mode: recordedMode(k1.id, given), record: undefined, ignored: false });
    }
  });

  it('a store that records none: plain without a key; given one, sealing and recorded when new, ignored (told) when it holds records', () => {
    expect(needsRecords(undefined, undefined)).toBe(false);
    expect(writeSealing(undefined, undefined, false)).toEqual({ mode: { kind: 'plain' }, record: undefined, ignored: false });
    expect(needsRecords(undefined, k1)).toBe(true);
    expect(writeSealing(undefined, k1, false)).toEqual({ mode: { kind: 'sealing', key: k1 }, record: k1, ignored: false });
    expect(writeSealing(undefined, k1, true)).toEqual({ mode: { kind: 'plain' }, record: undefined, ignored: true });
    expect(keyIgnored(k1)).toContain(`key ${k1.id} is ignored`);
  });
});
