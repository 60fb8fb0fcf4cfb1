// given(records kept) → when(history / get --at) → then(versions / the session then / error).
import { describe, expect, it } from 'vitest';
import { getSessionAt, parseHistoryPoint, sessionHistory } from '../../../src/domain/session/history';
import type { SessionScope } from '../../../src/domain/session/store';
import type { EventDraft, JournalRecord } from '../../../src/journal/codec/record';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { LogicalSessionId } from '../../../src/shared/ids';
import { ev, put, T0 } from './given';

const HOUR = 3_600_000;
/** A store whose whole kept past is `drafts`, one record an hour from T0 (seq 1, 2, …). */
function scopeOver(drafts: EventDraft[], agent?: string): SessionScope {
  const records: JournalRecord[] = drafts.map((d, i) => ({
    seq: i + 1,
    ts: new Date(T0 + i * HOUR).toISOString(),
    ev: d.ev,
    data: d.data,
    p: '',
    h: '',
    ...(d.actor ? { actor: d.actor } : {}),
  }));
  const dir = {
    readHistory: async (_spec: unknown, sink: (r: JournalRecord, at: { line: number; offset: number; length: number }) => void) => {
      for (const [i, r] of records.entries()) sink(r, { line: i + 1, offset: 0, length: 10 });
    },
  } as unknown as JournalStore;
  return { dir, agent: agent as never, now: T0 + 100 * HOUR };
}
const id = (s: string) => s as LogicalSessionId;
const code = async (p: Promise<unknown>) =>
  p.then(
    () => 0,
    (e) => e.exitCode,
  );

const past = [
  put('s', '{"v":1}'),
  put('other', '{}'),
  ev('archived', { id: 's', reason: 'later' }, 'ops'),
  ev('unarchived', { id: 's' }),
  put('s', '{"v":22}'),
  ev('closed', { id: 's', outcome: 'completed', summary: null }),
  ev('deleted', { id: 's' }),
  put('s', '{"again":true}'),
];

describe('session history', () => {
  it('lists every recorded version of the session, newest first, with the status and state size after each', async () => {
    const { history } = await sessionHistory(scopeOver(past), id('s'));
    expect(history.map((h) => [h.seq, h.ev, h.actor, h.status, h.state_bytes])).toEqual([
      [8, 'session.put', null, 'active', 14],
      [7, 'session.deleted', null, null, null],
      [6, 'session.closed', null, 'closed', 8],
      [5, 'session.put', null, 'active', 8],
      [4, 'session.unarchived', null, 'active', 7],
      [3, 'session.archived', 'ops', 'archived', 7],
      [1, 'session.put', null, 'active', 7],
    ]);
    expect(history[0]!.ts).toBe(new Date(T0 + 7 * HOUR).toISOString());
    expect((await sessionHistory(scopeOver(past), id('s'), { limit: 2 })).history.map((h) => h.seq)).toEqual([8, 7]);
  });

  it('is 3 for a session never kept, and sees only the caller’s scope', async () => {
    expect(await code(sessionHistory(scopeOver(past), id('nope')))).toBe(3);
    expect(await code(sessionHistory(scopeOver(past, 'alice'), id('s')))).toBe(3);
    const scoped = scopeOver([put('__agent_session::alice::s', '{"a":1}')], 'alice');
    expect((await sessionHistory(scoped, id('s'))).history).toHaveLength(1);
  });
});

describe('session get --at', () => {
  it('answers the session as it was at a record or a time', async () => {
    const at = (p: string) => getSessionAt(scopeOver(past), id('s'), parseHistoryPoint(p));
    expect((await at('1')).state).toBe('{"v":1}');
    expect((await at('2')).state).toBe('{"v":1}');
    expect((await at('3')).session.status).toBe('archived');
    expect((await at('5')).state).toBe('{"v":22}');
    expect((await at(new Date(T0 + 4.5 * HOUR).toISOString())).state).toBe('{"v":22}');
    expect((await at('6')).session).toMatchObject({ status: 'closed', outcome: 'completed' });
    expect((await at('99')).state).toBe('{"again":true}');
  });

  it('is 3 before the session existed and while it was deleted; 5 for a point that is neither seq nor time', async () => {
    const at = (p: string) => code(getSessionAt(scopeOver(past), id('s'), parseHistoryPoint(p)));
    expect(await at(new Date(T0 - HOUR).toISOString())).toBe(3);
    expect(await at('7')).toBe(3);
    expect(await code(getSessionAt(scopeOver(past), id('other'), parseHistoryPoint('1')))).toBe(3);
    expect(() => parseHistoryPoint('yesterday')).toThrow(expect.objectContaining({ exitCode: 5 }));
    expect(() => parseHistoryPoint('0')).toThrow(expect.objectContaining({ exitCode: 5 }));
    expect(parseHistoryPoint(' 12 ')).toEqual({ seq: 12 });
    expect(parseHistoryPoint('2026-01-01T00:00:00Z')).toEqual({ at: T0 });
  });
});
