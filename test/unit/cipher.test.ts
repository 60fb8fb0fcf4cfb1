// The record cipher (SPEC §13): AES-256-GCM per value, a fresh nonce each, the value's place bound as associated data.
import { afterEach, describe, expect, it } from 'vitest';
import { configureCipher, isSealed, openSealed, sealDrafts, sealedBytes, sealedKeyId, sealText, shownSealed } from '../../src/journal/codec/cipher';
import { newStoreKey, parseStoreKey } from '../../src/shared/store-key';
import { SESSION_STORE } from '../../src/domain/session/fold';
import type { StoreSpec } from '../../src/journal/codec/store-spec';
import type { CruxError } from '../../src/shared/errors';

const key = () => parseStoreKey(newStoreKey().text, 'k');
const place = { file: 'sessions.jsonl', entity: 's1', field: 'state' };
const refusal = (fn: () => unknown): CruxError => {
  try {
    fn();
  } catch (error) {
    return error as CruxError;
  }
  throw new Error('expected a refusal');
};

afterEach(() => configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) }));

describe('record cipher', () => {
  it('seals with a fresh nonce each time and opens at the same place', () => {
    const k = key();
    const a = sealText(k, '{"secret":"hunter2"}', place);
    const b = sealText(k, '{"secret":"hunter2"}', place);
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(isSealed(a)).toBe(true);
    expect(sealedKeyId(a)).toBe(k.id);
    expect(openSealed(a, place, k)).toBe('{"secret":"hunter2"}');
    expect(sealedBytes(a)).toBe(Buffer.byteLength('{"secret":"hunter2"}'));
    expect(sealedBytes('plain é')).toBe(8);
  });

  it('a value moved to another entity, field or journal does not open (6); nor an altered one', () => {
    const k = key();
    const sealed = sealText(k, 'text', place);
    for (const other of [
      { ...place, entity: 's2' },
      { ...place, field: 'summary' },
      { ...place, file: 'cases.jsonl' },
    ]) {
      expect(refusal(() => openSealed(sealed, other, k)).exitCode).toBe(6);
    }
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.at(-1)}`;
    expect(refusal(() => openSealed(flipped, place, k)).exitCode).toBe(6);
  });

  it('without the key or with another: exit 6 naming the key id needed, never a key', () => {
    const k = key();
    const other = key();
    const sealed = sealText(k, 'text', place);
    for (const given of [undefined, other]) {
      const error = refusal(() => openSealed(sealed, place, given));
      expect(error.exitCode).toBe(6);
      expect(error.message).toContain(k.id);
      expect(error.message).not.toContain(k.bytes.toString('base64url'));
    }
    expect(openSealed('plain', place, undefined)).toBe('plain');
    configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) });
    expect(shownSealed(sealed, place)).toBe(`[sealed:${k.id}]`);
    configureCipher({ key: k, mode: () => ({ kind: 'plain' }) });
    expect(shownSealed(sealed, place)).toBe('text');
  });

  it('seals the declared fields of drafts by mode: plain as is, sealing, locked refused (6)', () => {
    const k = key();
    const spec = SESSION_STORE as StoreSpec<unknown>;
    const drafts = [
      { ev: 'session.put', data: { id: 's1', state: '{"a":"hunter2"}', total_tokens: 3, expires_at: null } },
      { ev: 'session.closed', data: { id: 's1', outcome: 'completed', summary: null } },
      { ev: 'session.touched', data: { id: 's1' } },
    ];
    configureCipher({ key: k, mode: () => ({ kind: 'plain' }) });
    expect(sealDrafts(spec, drafts)).toBe(drafts);
    configureCipher({ key: k, mode: () => ({ kind: 'sealing', key: k }) });
    const sealed = sealDrafts(spec, drafts);
    const put = sealed[0]!.data as any;
    expect(put.state).not.toContain('hunter2');
    expect(openSealed(put.state, { file: 'sessions.jsonl', entity: 's1', field: 'state' }, k)).toBe('{"a":"hunter2"}');
    expect(put.total_tokens).toBe(3);
    expect(sealed[1]).toBe(drafts[1]);
    // An archive's reason is sealed at the session's archive_reason, where compaction restates it.
    const archived = sealDrafts(spec, [{ ev: 'session.archived', data: { id: 's1', reason: 'why' } }])[0]!.data as any;
    expect(openSealed(archived.reason, { file: 'sessions.jsonl', entity: 's1', field: 'archive_reason' }, k)).toBe('why');
    configureCipher({ key: undefined, mode: () => ({ kind: 'locked', keyId: k.id }) });
    expect(sealDrafts(spec, [drafts[2]!])).toEqual([drafts[2]]);
    const error = refusal(() => sealDrafts(spec, drafts));
    expect(error.exitCode).toBe(6);
    expect(error.message).toContain(k.id);
  });
});
