import { describe, expect, it } from 'vitest';
import { CruxError } from '../../../src/shared/errors';
import type { ScopedSessionId } from '../../../src/shared/ids';
import {
  decideArchive,
  decideClose,
  decideDelete,
  decideHandOff,
  decideImport,
  decidePut,
  decideReap,
  decideReceive,
  decideTouch,
  decideUnarchive,
} from '../../../src/domain/session/decide';
import { toImported } from '../../../src/domain/session/fold';
import { apply, ev, given, put, T0 } from './given';

const k = (s: string) => s as ScopedSessionId;
const A = k('a');
const scoped = k('__agent_session::bob::a');

function refusal(fn: () => unknown): { code: number; message: string; hint?: string } {
  try {
    fn();
  } catch (error) {
    if (error instanceof CruxError) return { code: error.exitCode, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('put', () => {
  it('creates, then replaces, carrying resulting values (not deltas)', () => {
    const s = given();
    const first = decidePut(s, { key: A, state: '{"n":1}', tokens: 5, ttlMs: 60_000 }, T0);
    const created = '2026-01-01T00:00:00.000Z';
    expect(first).toEqual([
      {
        ev: 'session.put',
        data: { id: 'a', state: '{"n":1}', total_tokens: 5, expires_at: '2026-01-01T00:01:00.000Z', created_at: created, handoff_id: null },
        actor: undefined,
      },
    ]);
    apply(s, first);
    const second = decidePut(s, { key: A, state: '{"n":2}', addTokens: 7 }, T0 + 1000);
    // The put carries what it keeps of the session (created_at), so it alone determines the session.
    expect(second[0]!.data).toEqual({
      id: 'a',
      state: '{"n":2}',
      total_tokens: 12,
      expires_at: '2026-01-01T00:01:00.000Z',
      created_at: created,
      handoff_id: null,
    });
    // Replaying the same record twice changes nothing.
    apply(s, second);
    apply(s, second);
    expect(s.get(A)).toMatchObject({ state: '{"n":2}', total_tokens: 12, status: 'active' });
  });

  it('refuses a total over the budget (5), on archived and closed sessions (4)', () => {
    expect(refusal(() => decidePut(given(put('a')), { key: A, state: '{}', tokens: 11, maxTokens: 10 }, T0)).code).toBe(5);
    const archived = given(put('a'), ev('archived', { id: 'a', reason: null }));
    expect(refusal(() => decidePut(archived, { key: A, state: '{}' }, T0))).toEqual({
      code: 4,
      message: 'cannot put session "a": it is archived',
      hint: 'the state archived allows: unarchive, close, touch',
    });
    const closed = given(put('a'), ev('closed', { id: 'a', outcome: 'completed', summary: null }));
    expect(refusal(() => decidePut(closed, { key: A, state: '{}' }, T0))).toMatchObject({ code: 4, message: 'cannot put session "a": it is closed' });
  });

  it('brings a handed-off session back to active', () => {
    const s = given(put('a'), ev('handed_off', { id: 'a', handoff_id: 'h_1' }));
    apply(s, decidePut(s, { key: A, state: '{}' }, T0));
    expect(s.get(A)!.status).toBe('active');
  });
});

describe('archive / unarchive', () => {
  it('archives with a scrubbed reason and unarchives', () => {
    const s = given(put('a'));
    const drafts = decideArchive(s, A, 'see https://user:tok@example.com/x', 'ops');
    expect(drafts).toEqual([{ ev: 'session.archived', data: { id: 'a', reason: 'see https://example.com/x' }, actor: 'ops' }]);
    apply(s, drafts);
    expect(s.get(A)).toMatchObject({ status: 'archived', archive_reason: 'see https://example.com/x', actor: 'ops' });
    expect(refusal(() => decideArchive(s, A, undefined)).code).toBe(4);
    apply(s, decideUnarchive(s, A));
    expect(s.get(A)).toMatchObject({ status: 'active', archived_at: null, archive_reason: null });
    expect(refusal(() => decideUnarchive(s, A))).toMatchObject({ code: 4, hint: 'the state active allows: put, archive, handoff, receive, close, touch' });
  });

  it('answers a missing session with 3', () => {
    expect(refusal(() => decideArchive(given(), A, undefined)).code).toBe(3);
    expect(refusal(() => decideUnarchive(given(), scoped))).toMatchObject({ code: 3, message: 'no session "a" of agent "bob"' });
  });
});

describe('close', () => {
  it('closes once; a second close is already_closed with no events, the first record standing', () => {
    const s = given(put('a'));
    const first = decideClose(s, A, { outcome: 'failed', summary: 'https://u:p@h.example/log' });
    expect(first.outcome).toBe('closed');
    expect(first.drafts[0]!.data).toEqual({ id: 'a', outcome: 'failed', summary: 'https://h.example/log' });
    apply(s, first.drafts, '2026-01-01T01:00:00.000Z');
    const again = decideClose(s, A, { outcome: 'completed', summary: 'other' });
    expect(again).toEqual({ outcome: 'already_closed', drafts: [] });
    // A duplicated close line (replayed twice) keeps the first.
    apply(s, [ev('closed', { id: 'a', outcome: 'abandoned', summary: 'late' })], '2026-01-01T02:00:00.000Z');
    expect(s.get(A)).toMatchObject({ status: 'closed', outcome: 'failed', summary: 'https://h.example/log', closed_at: '2026-01-01T01:00:00.000Z' });
  });

  it('closes an archived and a handed-off session; refuses a missing one (3)', () => {
    for (const before of [ev('archived', { id: 'a', reason: null }), ev('handed_off', { id: 'a', handoff_id: 'h' })]) {
      expect(decideClose(given(put('a'), before), A, { outcome: 'completed' }).outcome).toBe('closed');
    }
    expect(refusal(() => decideClose(given(), A, { outcome: 'completed' })).code).toBe(3);
  });
});

describe('touch', () => {
  it('moves updated_at only, keeping state and status; creates a missing session only when told how', () => {
    const s = given(put('a', '{"k":1}'), ev('archived', { id: 'a', reason: null }));
    const touched = decideTouch(s, A, undefined, T0, 'hook');
    expect(touched).toEqual({ outcome: 'touched', drafts: [{ ev: 'session.touched', data: { id: 'a' }, actor: 'hook' }] });
    apply(s, touched.drafts, '2026-01-01T03:00:00.000Z');
    expect(s.get(A)).toMatchObject({ state: '{"k":1}', status: 'archived', updated_at: '2026-01-01T03:00:00.000Z' });
    expect(refusal(() => decideTouch(given(), A, undefined, T0)).code).toBe(3);
    const created = decideTouch(given(), A, { key: A, state: '{"cwd":"/x"}', ttlMs: 60_000 }, T0);
    expect(created.outcome).toBe('created');
    expect(created.drafts[0]).toMatchObject({ ev: 'session.put', data: { id: 'a', state: '{"cwd":"/x"}', expires_at: '2026-01-01T00:01:00.000Z' } });
  });

  it('changes nothing on a closed session (the declared no-op), and a replayed touch does not reopen one', () => {
    const s = given(put('a'), ev('closed', { id: 'a', outcome: 'expired', summary: null }));
    expect(decideTouch(s, A, { key: A, state: '{}' }, T0)).toEqual({ outcome: 'closed', drafts: [] });
    apply(s, [ev('touched', { id: 'a' })], '2026-01-02T00:00:00.000Z');
    expect(s.get(A)).toMatchObject({ status: 'closed', updated_at: '2026-01-01T00:00:00.000Z' });
  });
});

describe('reap', () => {
  const exp = (id: string, at: string) => put(id, '{}', { expires_at: at });
  it('closes exactly the non-closed sessions past expiry, as expired, in one decision', () => {
    const s = given(
      exp('old', '2026-01-01T00:00:00.000Z'),
      exp('due', '2026-01-01T01:00:00.000Z'),
      exp('later', '2026-01-02T00:00:00.000Z'),
      put('never'),
      exp('parked', '2025-12-01T00:00:00.000Z'),
      ev('archived', { id: 'parked', reason: null }),
      exp('done', '2025-12-01T00:00:00.000Z'),
      ev('closed', { id: 'done', outcome: 'completed', summary: null }),
      exp('__agent_session::bob::x', '2025-12-01T00:00:00.000Z'),
    );
    const now = Date.parse('2026-01-01T01:00:00.000Z');
    const all = decideReap(s, now, () => true);
    expect(all.keys).toEqual(['__agent_session::bob::x', 'due', 'old', 'parked']);
    expect(all.drafts.map((d) => d.data)).toContainEqual({ id: 'due', outcome: 'expired', summary: null });
    apply(s, all.drafts);
    expect(decideReap(s, now, () => true)).toEqual({ keys: [], drafts: [] });
    expect(s.get(k('old'))).toMatchObject({ status: 'closed', outcome: 'expired' });
  });

  it('reaps only what the filter admits (an agent its own)', () => {
    const s = given(
      put('a', '{}', { expires_at: '2025-01-01T00:00:00.000Z' }),
      put('__agent_session::bob::a', '{}', { expires_at: '2025-01-01T00:00:00.000Z' }),
    );
    expect(decideReap(s, T0, (key) => key.startsWith('__agent_session::bob::')).keys).toEqual(['__agent_session::bob::a']);
  });
});

describe('delete', () => {
  it('removes from any state, closed included; 3 when missing', () => {
    const s = given(put('a'), ev('closed', { id: 'a', outcome: 'completed', summary: null }));
    apply(s, decideDelete(s, A));
    expect(s.has(A)).toBe(false);
    expect(refusal(() => decideDelete(s, A)).code).toBe(3);
    // After deletion the id is free for a new session.
    apply(s, decidePut(s, { key: A, state: '1' }, T0));
    expect(s.get(A)!.status).toBe('active');
  });
});

describe('handoff (for the handoff commands)', () => {
  it('hands off an active session, records the handoff id, refuses archived (4) and missing (3)', () => {
    const s = given(put('__agent_session::alice::t'));
    const key = k('__agent_session::alice::t');
    const drafts = decideHandOff(s, key, 'h_abc');
    expect(drafts).toEqual([{ ev: 'session.handed_off', data: { id: key, handoff_id: 'h_abc' }, actor: undefined }]);
    apply(s, drafts);
    expect(s.get(key)).toMatchObject({ status: 'handed_off', handoff_id: 'h_abc' });
    expect(decideHandOff(s, key, 'h_def')).toHaveLength(1);
    expect(refusal(() => decideHandOff(given(put('a'), ev('archived', { id: 'a', reason: null })), A, 'h')).code).toBe(4);
    expect(refusal(() => decideHandOff(given(), A, 'h')).code).toBe(3);
  });

  it('receives: creates, replaces an active or handed-off session, refuses archived and closed (4)', () => {
    const rk = k('__agent_session::bob::t');
    const s = given();
    apply(s, decideReceive(s, rk, { state: '{"v":1}', handoffId: 'h_1' }));
    expect(s.get(rk)).toMatchObject({ status: 'active', state: '{"v":1}', handoff_id: 'h_1', total_tokens: 0 });
    apply(s, decidePut(s, { key: rk, state: '{"v":2}', tokens: 9 }, T0));
    apply(s, decideReceive(s, rk, { state: '{"v":3}', handoffId: 'h_2' }));
    expect(s.get(rk)).toMatchObject({ status: 'active', state: '{"v":3}', handoff_id: 'h_2', total_tokens: 9 });
    apply(s, decideArchive(s, rk, undefined));
    expect(refusal(() => decideReceive(s, rk, { state: '{}' }))).toMatchObject({
      code: 4,
      message: 'cannot receive session "t" of agent "bob": it is archived',
    });
    apply(s, decideClose(s, rk, { outcome: 'completed' }).drafts);
    expect(refusal(() => decideReceive(s, rk, { state: '{}' })).code).toBe(4);
  });
});

describe('import', () => {
  const rec = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    state: '{}',
    status: 'active' as const,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    total_tokens: 0,
    expires_at: null,
    archived_at: null,
    archive_reason: null,
    actor: null,
    closed_at: null,
    outcome: null,
    summary: null,
    handoff_id: null,
    ...extra,
  });

  it('creates and replaces in one batch; identical records are unchanged (a re-import writes nothing)', () => {
    const s = given(put('b'));
    const { drafts, summary } = decideImport(s, [
      { line: 1, data: rec('a') },
      { line: 2, data: rec('b', { state: '[2]' }) },
    ]);
    expect(summary).toEqual({ imported: 2, created: 1, replaced: 1, unchanged: 0 });
    apply(s, drafts);
    expect(s.get(k('b'))!.state).toBe('[2]');
    const again = decideImport(
      s,
      [1, 2].map((line) => ({ line, data: toImported([...s.values()][line - 1]!) })),
    );
    expect(again).toEqual({ drafts: [], summary: { imported: 0, created: 0, replaced: 0, unchanged: 2 } });
  });

  it('refuses a different record over a closed session (4, naming the line)', () => {
    const s = given(put('a'), ev('closed', { id: 'a', outcome: 'completed', summary: null }));
    expect(refusal(() => decideImport(s, [{ line: 7, data: rec('a') }]))).toMatchObject({ code: 4, message: expect.stringMatching(/^line 7: /) });
  });
});
