// `crux doctor`'s folds: what doctor asks of the session and case journals, kept as it verifies them, and nothing
// more. The stores' own folds hold every session's state and every case's body (a case bank with its terms): at 1M
// sessions and 1M cases doctor held 2.2 GB for a report that shows counts, a few sessions and two estimates. These
// keep, per live entity, what those need (a session's status, times and line bytes; a case's line bytes), by the
// stores' own rules (nextRecord, foldable), so that the report is the one the stores' folds give.
import type { JournalRecord } from '../journal/codec/record';
import type { LinePosition } from '../journal/codec/scan';
import type { StoreSpec } from '../journal/codec/store-spec';
import type { ScopedSessionId } from '../shared/ids';
import { CASE_STORE } from './case/store';
import { parseCaseEvent } from './case/events';
import { foldable } from './case/payload';
import { parseSessionEvent } from './session/events';
import { nextRecord, SESSION_STORE, type SessionRecord } from './session/fold';

/** What doctor judges of a session (doctor-sessions.ts), and its line's bytes (the compaction estimate). */
export type SessionBriefRecord = Pick<SessionRecord, 'key' | 'status' | 'updated_at' | 'expires_at' | 'bytes'>;
export type SessionBriefs = Map<ScopedSessionId, SessionBriefRecord>;

const briefOf = (r: SessionRecord): SessionBriefRecord => ({
  key: r.key,
  status: r.status,
  updated_at: r.updated_at,
  expires_at: r.expires_at,
  bytes: r.bytes,
});

/** The session fold's rule (fold.ts, evolve) over briefs: the same sessions, in the same order, with the same status and times. */
function evolveBriefs(briefs: SessionBriefs, record: JournalRecord, at: LinePosition): void {
  const event = parseSessionEvent(record);
  if (typeof event === 'string') return;
  const key = event.data.id as ScopedSessionId;
  const current = briefs.get(key);
  // nextRecord reads only a current record's status and carries its other fields: a brief's are those doctor keeps.
  const next = nextRecord(key, current as SessionRecord | undefined, event, { ts: record.ts, actor: record.actor ?? null, bytes: at.length });
  if (next === undefined) briefs.delete(key);
  else if (next !== (current as SessionRecord | undefined)) briefs.set(key, briefOf(next));
}

/** The session journal as doctor folds it: briefs, and the store's compaction estimate over them. */
export const SESSION_BRIEFS: StoreSpec<SessionBriefs> = {
  ...(SESSION_STORE as unknown as StoreSpec<SessionBriefs>),
  initial: () => new Map(),
  evolve: evolveBriefs,
  liveBytes: (briefs) => {
    let total = 0;
    for (const r of briefs.values()) total += r.bytes + 200;
    return total;
  },
};

/** Each live case's record length, by id: the case bank's liveRecordBytes without the bank. */
export type CaseLengths = Map<string, number>;

function evolveLengths(lengths: CaseLengths, record: JournalRecord, at: LinePosition): void {
  const event = parseCaseEvent(record);
  if (typeof event === 'string') return;
  if (event.ev === 'case.recorded' || event.ev === 'case.imported') {
    const fields = foldable(event.data);
    if (fields !== undefined) lengths.set(fields.id, at.length);
  } else if (event.ev === 'case.deleted') lengths.delete(event.data.case_id);
}

/** The case journal as doctor folds it: record lengths, and the bank's compaction estimate over them. */
export const CASE_LENGTHS: StoreSpec<CaseLengths> = {
  ...(CASE_STORE as unknown as StoreSpec<CaseLengths>),
  initial: () => new Map(),
  evolve: evolveLengths,
  liveBytes: (lengths) => {
    let total = 0;
    for (const length of lengths.values()) total += length + 1;
    return total;
  },
};

/** The spec doctor surveys a journal by: its own fold where it keeps less than the store's. */
export const doctorSpec = (spec: StoreSpec<any>): StoreSpec<any> => (spec === SESSION_STORE ? SESSION_BRIEFS : spec === CASE_STORE ? CASE_LENGTHS : spec);
