// A case's words as keyed hashes on an encrypted store (domain/case/sealed.ts): HMAC-SHA256 under an HKDF-SHA256 key
// derived from the store key, as docs/keys.md documents it, so that another implementation can check it.
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { configureCipher, resealData, sealText } from '../../../src/journal/codec/cipher';
import { CASE_SEALED, indexTerms } from '../../../src/domain/case/sealed';
import { foldable } from '../../../src/domain/case/payload';
import { CASE_STORE } from '../../../src/domain/case/store';
import { keyIdOf, type StoreKey } from '../../../src/shared/store-key';

const keyOf = (): StoreKey => {
  const bytes = randomBytes(32);
  return { id: keyIdOf(bytes), bytes };
};
/** The documented derivation, computed here on its own. */
const expected = (key: StoreKey, word: string) =>
  createHmac('sha256', Buffer.from(hkdfSync('sha256', key.bytes, Buffer.alloc(0), 'crux-case-terms-v1', 32)))
    .update(word)
    .digest('hex')
    .slice(0, 32);

afterEach(() => configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) }));

describe('case terms as keyed hashes', () => {
  it('derive adds the HMAC of each term (task tokens, then each tag), and takes them out without a key', () => {
    const key = keyOf();
    const plain = { case_id: 'c_1', task: 'Fix the Build, fix it', tags: ['ci', 'Build'] };
    const derived = CASE_SEALED.derive!(plain, key);
    expect(derived.terms_hmac).toEqual(['fix', 'the', 'build', 'it', 'ci'].map((w) => expected(key, w)));
    expect(CASE_SEALED.derive!(derived, undefined)).toEqual(plain);
    // Another key, other hashes: rekey must rewrite them.
    expect(CASE_SEALED.derive!(plain, keyOf()).terms_hmac).not.toEqual(derived.terms_hmac);
  });

  it('a sealed case folds by its hashes, a query is hashed the same way, and without the key a query is 6 naming its id', () => {
    const key = keyOf();
    const body = {
      case_id: 'c_1',
      task: sealText(key, 'Fix the build', { file: 'cases.jsonl', entity: 'c_1', field: 'task' }),
      action: 'a',
      outcome: 'o',
      reward: 1,
      success: true,
      created_at: '2026-01-01T00:00:00.000Z',
      tags: ['ci'],
      terms_hmac: ['fix', 'the', 'build', 'ci'].map((w) => expected(key, w)),
    };
    expect(foldable(body)).toMatchObject({ task: '', tags: body.terms_hmac });
    configureCipher({ key, mode: () => ({ kind: 'sealing', key }) });
    expect([...indexTerms('the BUILD')]).toEqual(['the', 'build'].map((w) => expected(key, w)));
    configureCipher({ key: undefined, mode: () => ({ kind: 'locked', keyId: key.id }) });
    expect(() => indexTerms('the build')).toThrow(key.id);
    configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) });
    expect([...indexTerms('the BUILD')]).toEqual(['the', 'build']);
  });

  it('rekey rewrites the hashes with the text; decrypt takes them out; a run again changes nothing', () => {
    const from = keyOf();
    const to = keyOf();
    const plain = { case_id: 'c_2', task: 'Deploy service', action: 'a', outcome: 'o', context: null, tags: [] };
    const encrypted = resealData(CASE_STORE, 'case.recorded', plain, undefined, from)!;
    expect(encrypted.terms_hmac).toEqual(['deploy', 'service'].map((w) => expected(from, w)));
    expect(encrypted.context).toBeNull();
    const rekeyed = resealData(CASE_STORE, 'case.recorded', encrypted, from, to)!;
    expect(rekeyed.terms_hmac).toEqual(['deploy', 'service'].map((w) => expected(to, w)));
    expect(resealData(CASE_STORE, 'case.recorded', rekeyed, from, to)).toBeUndefined();
    expect(resealData(CASE_STORE, 'case.recorded', rekeyed, to, undefined)).toEqual(plain);
  });
});
