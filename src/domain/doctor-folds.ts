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
import { parseSessionEvent, type SessionEvent } from './session/events';
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

/** What doctor holds of a session record until its batch is whole: its event, and only the fields a brief is made of. */
interface SessionItem {
  readonly ev: SessionEvent['ev'];
  readonly id: ScopedSessionId;
  readonly ts: string;
  readonly status: unknown;
  readonly updated_at: unknown;
  readonly expires_at: unknown;
}

function keepSession(record: JournalRecord): SessionItem | undefined {
  const event = parseSessionEvent(record);
  if (typeof event === 'string') return undefined;
  const d = event.data as Partial<Record<'status' | 'updated_at' | 'expires_at', unknown>>;
  return { ev: event.ev, id: event.data.id as ScopedSessionId, ts: record.ts, status: d.status, updated_at: d.updated_at, expires_at: d.expires_at };
}

/**
 * The session fold's rule (fold.ts, evolve) over briefs: the same sessions, in the same order, with the same status
 * and times. nextRecord reads only a current record's status and carries its other fields, and takes the status, times
 * and expiry from the event: what a brief and an item keep (a state, a summary, a reason are not kept: '' and absent).
 */
function evolveBriefs(briefs: SessionBriefs, item: SessionItem | undefined, at: LinePosition): void {
  if (item === undefined) return;
  const key = item.id;
  const current = briefs.get(key) as SessionRecord | undefined;
  const event = { ev: item.ev, data: { id: key, state: '', status: item.status, updated_at: item.updated_at, expires_at: item.expires_at } } as SessionEvent;
  const next = nextRecord(key, current, event, { ts: item.ts, actor: null, bytes: at.length });
  if (next === undefined) briefs.delete(key);
  else if (next !== current) briefs.set(key, briefOf(next));
}

/** The session journal as doctor folds it: briefs, and the store's compaction estimate over them. */
const SESSION_BRIEFS: StoreSpec<SessionBriefs> = {
  ...(SESSION_STORE as unknown as StoreSpec<SessionBriefs>),
  initial: () => new Map(),
  evolve: (briefs, record, at) => evolveBriefs(briefs, keepSession(record), at),
  kept: { keep: keepSession, evolve: evolveBriefs },
  liveBytes: (briefs) => {
    let total = 0;
    for (const r of briefs.values()) total += r.bytes + 200;
    return total;
  },
};

/** Each live case's record length, by id: the case bank's liveRecordBytes without the bank. */
export type CaseLengths = Map<string, number>;

/** What doctor holds of a case record: the id of a case the bank folds (recorded, imported), or of one deleted. */
type CaseItem = string | { readonly deleted: string } | undefined;

function keepCase(record: JournalRecord): CaseItem {
  const event = parseCaseEvent(record);
  if (typeof event === 'string') return undefined;
  if (event.ev === 'case.recorded' || event.ev === 'case.imported') return foldable(event.data)?.id;
  return event.ev === 'case.deleted' ? { deleted: event.data.case_id } : undefined;
}

function evolveLengths(lengths: CaseLengths, item: CaseItem, at: LinePosition): void {
  if (typeof item === 'string') lengths.set(item, at.length);
  else if (item !== undefined) lengths.delete(item.deleted);
}

/** The case journal as doctor folds it: record lengths, and the bank's compaction estimate over them. */
const CASE_LENGTHS: StoreSpec<CaseLengths> = {
  ...(CASE_STORE as unknown as StoreSpec<CaseLengths>),
  initial: () => new Map(),
  evolve: (lengths, record, at) => evolveLengths(lengths, keepCase(record), at),
  kept: { keep: keepCase, evolve: evolveLengths },
  liveBytes: (lengths) => {
    let total = 0;
    for (const length of lengths.values()) total += length + 1;
    return total;
  },
};

/**
 * The spec doctor surveys a journal by: its own fold where it keeps less than the store's, and what it keeps once a
 * journal is folded, so that each journal's fold is released before the next: the sessions judged (`judge`), of the
 * cases nothing (their estimate is taken before).
 */
export function doctorSpec(spec: StoreSpec<any>, judge: (briefs: SessionBriefs) => unknown): StoreSpec<any> {
  if (spec === SESSION_STORE) return { ...SESSION_BRIEFS, kept: { ...SESSION_BRIEFS.kept!, finish: judge } };
  if (spec === CASE_STORE) return { ...CASE_LENGTHS, kept: { ...CASE_LENGTHS.kept!, finish: () => null } };
  return spec;
}
