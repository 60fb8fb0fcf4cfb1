// given(events) → a Sessions map, folded by the store's own evolve, with no disk involved.
import type { EventDraft, JournalRecord } from '../../../src/journal/codec/record';
import { SESSION_STORE, type Sessions } from '../../../src/domain/session/fold';

export const T0 = Date.parse('2026-01-01T00:00:00.000Z');

export function given(...drafts: (EventDraft & { ts?: string })[]): Sessions {
  const sessions = SESSION_STORE.initial();
  apply(sessions, drafts);
  return sessions;
}

/** Applies drafts as replay would (each one a record of its own line). */
export function apply(sessions: Sessions, drafts: readonly EventDraft[], ts = '2026-01-01T00:00:00.000Z'): Sessions {
  drafts.forEach((d, i) => {
    const line = JSON.stringify(d.data);
    const record: JournalRecord = { seq: i + 1, ts: d.ts ?? ts, ev: d.ev, data: JSON.parse(line), p: '', h: '', ...(d.actor ? { actor: d.actor } : {}) };
    SESSION_STORE.evolve(sessions, record, { line: i + 1, offset: 0, length: line.length + 100 });
  });
  return sessions;
}

export const put = (id: string, state = '{}', extra: Record<string, unknown> = {}): EventDraft => ({
  ev: 'session.put',
  data: { id, state, total_tokens: 0, expires_at: null, ...extra },
});
export const ev = (name: string, data: Record<string, unknown>, actor?: string): EventDraft => ({ ev: `session.${name}`, data, actor });
