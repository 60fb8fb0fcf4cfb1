import { describe, expect, it } from 'vitest';
import type { EventDraft, JournalRecord } from '../../../src/journal/codec/record';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { FACT_STORE, factsVisibleTo } from '../../../src/domain/handoff/fact-store';
import { HANDOFF_STORE } from '../../../src/domain/handoff/ledger';

// given(events) → state; compaction's live() must rebuild the same state.
function replay<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): S {
  const state = spec.initial();
  drafts.forEach((d, i) => {
    const record: JournalRecord = {
      seq: i + 1,
      ts: d.ts ?? `2026-11-29T21:00:0${i % 10}.000Z`,
      ev: d.ev,
      data: d.data,
      p: '',
      h: '',
      ...(d.actor ? { actor: d.actor } : {}),
    };
    spec.evolve(state, record, { line: i + 1, offset: i * 100, length: 100 });
  });
  return state;
}

const envelope = { payload_b64: 'e30=', content_hash: 'aa', signature_b64: 'bb', signature_alg: 'blake3-mac-v1' };
const minted = (id: string, hash: string): EventDraft => ({
  ev: 'handoff.minted',
  data: {
    handoff_id: id,
    session_id: 's',
    source_agent: 'a',
    target_agent: null,
    created_at: '2026-11-29T21:00:00.000Z',
    expires_at: '2026-11-30T21:00:00.000Z',
    content_hash: hash,
    signature_alg: 'blake3-mac-v1',
    facts: 0,
    work_ids: 0,
    message: null,
    envelope: { ...envelope, content_hash: hash },
  },
});
const accepted = (hash: string, agent: string): EventDraft => ({
  ev: 'handoff.accepted',
  data: {
    content_hash: hash,
    handoff_id: null,
    session_id: 's',
    source_agent: 'a',
    agent,
    target_agent: null,
    created_at: '2026-11-29T21:00:00.000Z',
    expires_at: '2026-11-30T21:00:00.000Z',
    signature_alg: 'blake3-mac-v1',
    facts: 0,
    message: null,
  },
  actor: 'ops',
});

describe('handoffs.jsonl', () => {
  it('the first acceptance of a hash stands; a duplicate line changes nothing', () => {
    const ledger = replay(HANDOFF_STORE, [accepted('h1', 'bob'), accepted('h1', 'mallory')]);
    expect(ledger.accepted.get('h1')).toMatchObject({ agent: 'bob', actor: 'ops', accepted_at: '2026-11-29T21:00:00.000Z' });
  });

  it('ignores malformed payloads instead of throwing', () => {
    const ledger = replay(HANDOFF_STORE, [
      { ev: 'handoff.minted', data: null },
      { ev: 'handoff.minted', data: { handoff_id: 'h_x' } },
      { ev: 'handoff.accepted', data: { content_hash: 5 } },
      { ev: 'handoff.key_trusted', data: { agent: 'a' } },
    ]);
    expect([ledger.minted.size, ledger.accepted.size, ledger.trusted.size]).toEqual([0, 0, 0]);
  });

  it('compaction (live) keeps every minted envelope, the whole consumed set and the keyring', () => {
    const ledger = replay(HANDOFF_STORE, [
      minted('h_1', 'c1'),
      minted('h_2', 'c2'),
      accepted('c1', 'bob'),
      { ev: 'handoff.key_trusted', data: { agent: 'alice', public_key: 'ed25519:x', key_id: 'k1' } },
      { ev: 'handoff.key_trusted', data: { agent: 'alice', public_key: 'ed25519:x', key_id: 'k1' } },
    ]);
    const rebuilt = replay(HANDOFF_STORE, HANDOFF_STORE.live(ledger));
    expect([...rebuilt.minted.keys()]).toEqual(['h_1', 'h_2']);
    expect(rebuilt.minted.get('h_2')!.envelope).toEqual({ ...envelope, content_hash: 'c2' });
    expect(rebuilt.mintedByHash.get('c2')).toBe('h_2');
    expect(rebuilt.accepted.get('c1')).toMatchObject({ agent: 'bob', actor: 'ops', accepted_at: ledger.accepted.get('c1')!.accepted_at });
    expect(rebuilt.trusted.get('alice')!.map((k) => k.key_id)).toEqual(['k1']);
  });
});

describe('facts.jsonl', () => {
  const stored = (agent: string, id: string, json: string): EventDraft => ({ ev: 'fact.stored', data: { agent, fact_id: id, package: 'p', json } });

  it('keeps the latest version per (agent, fact id), raw; visibility is per agent', () => {
    const facts = replay(FACT_STORE, [
      stored('bob', 'f_1', '{"fact_id":"f_1","v":1}'),
      stored('bob', 'f_1', '{"fact_id":"f_1","v":2.0,"tenant_hash":"t"}'),
      stored('carol', 'f_2', '{"fact_id":"f_2","private":true,"entity":"s"}'),
      stored('bob', 'f_bad', 'not json'),
    ]);
    expect(factsVisibleTo(facts, 'bob').map((f) => f.raw)).toEqual(['{"fact_id":"f_1","v":2.0,"tenant_hash":"t"}']);
    expect(factsVisibleTo(facts, 'carol')[0]).toMatchObject({ private: true, entity: 's' });
    expect(factsVisibleTo(facts, 'nobody')).toEqual([]);
    const rebuilt = replay(FACT_STORE, FACT_STORE.live(facts));
    expect(factsVisibleTo(rebuilt, 'bob').map((f) => f.raw)).toEqual(['{"fact_id":"f_1","v":2.0,"tenant_hash":"t"}']);
  });
});
