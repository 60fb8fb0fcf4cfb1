// A session's past (SPEC §4): every recorded version, and the session as it was at a record or a time,
// folded from the journal and the history compactions kept. Only these two queries read history.
import type { JournalRecord } from '../../journal/codec/record';
import { invalid, notFound } from '../../shared/errors';
import type { LogicalSessionId, ScopedSessionId } from '../../shared/ids';
import { formatTime, parseTime, tryParseTime, type Instant } from '../../shared/time';
import type { SessionStatus } from './machine';
import { SESSION_STORE, type SessionRecord, type Sessions } from './fold';
import { keyFor, type SessionScope } from './store';
import { sealedBytes } from '../../journal/codec/cipher';
import { stateText, viewSession, type SessionView } from './view';

export interface HistoryEntry {
  readonly seq: number;
  readonly ts: string;
  readonly ev: string;
  readonly actor: string | null;
  /** The status after this record; null once the session was deleted. */
  readonly status: SessionStatus | null;
  /** The byte length of the state after this record; null once deleted. */
  readonly state_bytes: number | null;
}

/** A point in a session's past: a record's sequence number, or a time. */
export type HistoryPoint = { readonly seq: number } | { readonly at: Instant };

/** `--at`: a whole number is a sequence number, anything else an RFC 3339 time (exit 5 when neither). */
export function parseHistoryPoint(raw: string, what = '--at'): HistoryPoint {
  const text = raw.trim();
  if (/^\d+$/.test(text)) {
    const seq = Number(text);
    if (!Number.isSafeInteger(seq) || seq < 1) throw invalid(`${what} ${JSON.stringify(raw)}: a sequence number starts at 1`);
    return { seq };
  }
  return { at: parseTime(text, what) };
}

const describePoint = (p: HistoryPoint) => ('seq' in p ? `at record ${p.seq}` : `at ${formatTime(p.at)}`);

/** Folds every kept record of `key`, telling `onVersion` the session after each one. */
async function foldHistory(
  scope: SessionScope,
  key: ScopedSessionId,
  onVersion: (record: JournalRecord, after: SessionRecord | undefined) => boolean | void,
): Promise<boolean> {
  const sessions: Sessions = SESSION_STORE.initial();
  let seen = false;
  let stopped = false;
  // Of the journal, the store may read only the key's records (through its index): the others are passed over here anyway.
  await scope.dir.readHistory(
    SESSION_STORE,
    (record, at) => {
      if (stopped || SESSION_STORE.keyOf?.(record) !== key) return;
      seen = true;
      SESSION_STORE.evolve(sessions, record, at);
      if (onVersion(record, sessions.get(key)) === false) stopped = true;
    },
    { key },
  );
  return seen;
}

/** Every recorded version of the session, newest first (exit 3 when nothing of it was ever kept). */
export async function sessionHistory(
  scope: SessionScope,
  id: LogicalSessionId,
  opts: { limit?: number | undefined } = {},
): Promise<{ history: HistoryEntry[]; total: number }> {
  const key = keyFor(scope, id);
  const history: HistoryEntry[] = [];
  const seen = await foldHistory(scope, key, (record, after) => {
    history.push({
      seq: record.seq,
      ts: record.ts,
      ev: record.ev,
      actor: record.actor ?? null,
      status: after?.status ?? null,
      state_bytes: after === undefined ? null : sealedBytes(after.state),
    });
  });
  if (!seen) throw notFound(`no session ${JSON.stringify(id)} in the journal or its history`, 'see `crux session list --all`');
  history.reverse();
  return { history: opts.limit === undefined ? history : history.slice(0, opts.limit), total: history.length };
}

/** The session as it was at `point` (exit 3 when it did not exist then, or that past is no longer kept). */
export async function getSessionAt(scope: SessionScope, id: LogicalSessionId, point: HistoryPoint): Promise<{ session: SessionView; state: string }> {
  const key = keyFor(scope, id);
  let found: SessionRecord | undefined;
  await foldHistory(scope, key, (record, after) => {
    const within = 'seq' in point ? record.seq <= point.seq : (tryParseTime(record.ts) ?? Infinity) <= point.at;
    if ('seq' in point && !within) return false; // records come in sequence order
    if (within) found = after === undefined ? undefined : { ...after };
  });
  if (found === undefined) {
    throw notFound(
      `no version of session ${JSON.stringify(id)} is kept ${describePoint(point)}: it did not exist then, or that history was dropped`,
      '`crux session history <id>` lists the versions kept',
    );
  }
  return { session: viewSession(found, scope.now, scope.thresholds), state: stateText(found) };
}
