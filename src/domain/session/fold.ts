// The session store's folded state: one record per stored (scoped) id, built by evolve from the journal.
import { ACTIVITY_TALLY } from '../activity';
import { unhandledEvent, type StoreSpec } from '../../journal/codec/store-spec';
import type { JournalRecord } from '../../journal/codec/record';
import type { LinePosition } from '../../journal/codec/scan';
import { unscopeSessionId, type ScopedSessionId } from '../../shared/ids';
import { tryParseTime } from '../../shared/time';
import { CREATING_OPS, INITIAL_STATE, isTerminal, nextStatus, type SessionOp, type SessionStatus } from './machine';
import { STATUS_INDEXES, statusValues } from './status-key';
import { hashTag, TIED_INDEX, tiedRead, tiedValue } from './tie-key';
import { parseSessionEvent, SESSION_EVENTS as E, SESSION_SEALED, SESSION_VOCABULARY, type ImportedData, type SessionDraft, type SessionEvent } from './events';

/** A session as folded: a whole record's fields (as export and import carry them) under its stored key. */
export interface SessionRecord extends Omit<ImportedData, 'id'> {
  readonly key: ScopedSessionId;
  /** Journal bytes of the record that carries the state: the compaction estimate. */
  readonly bytes: number;
}

export type Sessions = Map<ScopedSessionId, SessionRecord>;

/** Which machine op each lifecycle event is (import restores a record whole; delete removes it). */
const OP_OF = {
  'session.put': 'put',
  'session.archived': 'archive',
  'session.unarchived': 'unarchive',
  'session.handed_off': 'handoff',
  'session.received': 'receive',
  'session.closed': 'close',
  'session.touched': 'touch',
} as const satisfies Partial<Record<SessionEvent['ev'], SessionOp>>;

/** Where the machine takes `current` by `op`: a session that does not exist only by a creating op. */
function moveTo(current: SessionRecord | undefined, op: SessionOp): SessionStatus | undefined {
  if (current === undefined) return (CREATING_OPS as readonly string[]).includes(op) ? INITIAL_STATE : undefined;
  return nextStatus(current.status, op);
}

interface Written {
  readonly ts: string;
  readonly actor: string | null;
  /** The record's line length, for the compaction estimate. */
  readonly bytes: number;
}

/**
 * The session after one event, as a new record (records are never changed in place): undefined when the
 * event removes it, `current` itself when the machine refuses the move (a duplicate close, a touch after the
 * close). Exhaustive: a new event that is not handled here does not compile.
 */
export function nextRecord(key: ScopedSessionId, current: SessionRecord | undefined, event: SessionEvent, w: Written): SessionRecord | undefined {
  if (event.ev === 'session.imported') return fromImported(key, event.data, w.bytes);
  if (event.ev === 'session.deleted') return undefined;
  const to = moveTo(current, OP_OF[event.ev]);
  if (to === undefined) return current;
  const base = current ?? emptyRecord(key, w.ts);
  switch (event.ev) {
    case 'session.put':
    case 'session.received': {
      const d = event.data;
      return {
        ...base,
        // A put carries what it keeps of the session it replaces (older records do not: keep the current);
        // a received session carries the handoff it came with.
        ...(event.ev === 'session.put' && 'created_at' in d ? { created_at: d.created_at ?? null } : {}),
        ...('handoff_id' in d ? { handoff_id: d.handoff_id ?? null } : {}),
        state: d.state,
        status: to,
        updated_at: w.ts,
        total_tokens: d.total_tokens,
        expires_at: d.expires_at,
        archived_at: null,
        archive_reason: null,
        actor: w.actor,
        bytes: w.bytes,
      };
    }
    case 'session.archived':
      return { ...base, status: to, archived_at: w.ts, archive_reason: event.data.reason, actor: w.actor };
    case 'session.unarchived':
      return { ...base, status: to, archived_at: null, archive_reason: null, actor: w.actor };
    case 'session.handed_off':
      return { ...base, status: to, handoff_id: event.data.handoff_id, actor: w.actor };
    case 'session.closed':
      return { ...base, status: to, closed_at: w.ts, outcome: event.data.outcome, summary: event.data.summary, actor: w.actor };
    case 'session.touched':
      return { ...base, updated_at: w.ts };
    default:
      return unhandledEvent(event);
  }
}

function evolve(sessions: Sessions, record: JournalRecord, at: LinePosition): void {
  // Reads verify each payload through the vocabulary (a bad one is reported there as a bad line); records
  // that reach evolve without it (this process's own appends, lines a verified index vouches for) parse here.
  const event = parseSessionEvent(record);
  if (typeof event === 'string') return;
  const key = event.data.id as ScopedSessionId;
  const next = nextRecord(key, sessions.get(key), event, { ts: record.ts, actor: record.actor ?? null, bytes: at.length });
  if (next === undefined) sessions.delete(key);
  else sessions.set(key, next);
}

function emptyRecord(key: ScopedSessionId, ts: string): SessionRecord {
  return {
    key,
    state: 'null',
    status: 'active',
    created_at: ts,
    updated_at: ts,
    total_tokens: 0,
    expires_at: null,
    archived_at: null,
    archive_reason: null,
    actor: null,
    closed_at: null,
    outcome: null,
    summary: null,
    handoff_id: null,
    bytes: 0,
  };
}

function fromImported(key: ScopedSessionId, d: ImportedData, bytes: number): SessionRecord {
  // `{ key, ...fields, bytes }` without the id, copied by a loop: the same fields in the same order, in about
  // two thirds of the time of a rest and a spread (a rebuild folds a million of these).
  const r: Record<string, unknown> = { key };
  for (const k in d) if (k !== 'id') r[k] = d[k as keyof ImportedData];
  r.bytes = bytes;
  return r as unknown as SessionRecord;
}

/** The whole record as one `session.imported` payload (export, import, compaction). */
export function toImported(r: SessionRecord): ImportedData {
  return {
    id: r.key,
    state: r.state,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
    total_tokens: r.total_tokens,
    expires_at: r.expires_at,
    archived_at: r.archived_at,
    archive_reason: r.archive_reason,
    actor: r.actor,
    closed_at: r.closed_at,
    outcome: r.outcome,
    summary: r.summary,
    handoff_id: r.handoff_id,
  };
}

/**
 * Where the windows of a session's id begin past its first characters (`scoped_order_<k>`), so that a read by
 * a long prefix reads the ids that share it, not every id that shares only the first few characters
 * (`session-…`: the index keeps 7 ordered bytes of a value).
 */
const ORDER_WINDOWS = [5, 10, 15, 20, 25, 30] as const;

const SESSION_INDEXES = [
  'agent',
  'strandable_updated',
  'open_expires',
  'unscoped_strandable_updated',
  'listed_updated',
  'unscoped_listed_updated',
  'scoped_strandable_updated',
  'scoped_listed_updated',
  'logical_id',
  'scoped_order',
  ...ORDER_WINDOWS.map((k) => `scoped_order_${k}`),
  'all_updated',
  'unscoped_all_updated',
  'scoped_all_updated',
  ...STATUS_INDEXES,
  TIED_INDEX,
] as const;

/**
 * A session's value of `scoped_order`, the ids of one scope in order for a read by prefix (completion): a
 * tag of the scope, then the logical id. The tag is short, so that the index's 7 ordered bytes hold most of
 * the id: `!` for no agent, else two characters from a hash of the agent's name (two agents that share a tag
 * only add candidates, which the caller's exact filter removes). Printable, so a database stores it as text.
 */
function scopedOrder(agent: string | undefined, id: string): string {
  // 92 characters from # to ~ (never !, the unscoped tag).
  return agent === undefined ? `!${id}` : `${tag(agent)}${id}`;
}

/** Two printable characters (# to ~) from a hash of a text. */
const tag = (text: string): string => hashTag(text, 2);

/**
 * A session's value of `scoped_order_<k>`: a tag of its scope and of the first `k` characters of its id, then
 * the rest of the id (undefined when the id is shorter than `k`: an id of `k` characters has the tag alone, so that
 * a deeper read of the ids that start with k characters holds that id too). Among the ids of one scope that start with
 * the same `k` characters its order is the ids' order, and its 7 ordered bytes hold the id's characters from
 * `k` on: two ids that share the tag without those characters only add candidates (filtered exactly).
 */
function windowValue(agent: string | undefined, id: string, k: number): string | undefined {
  return id.length >= k ? `${tag(`${agent === undefined ? '!' : `@${agent}`}\u0000${id.slice(0, k)}`)}${id.slice(k)}` : undefined;
}

/**
 * The read by prefix of a scope's ids that start with `prefix` (completion): the window that holds the most
 * of the prefix's characters in its ordered bytes, so that it reads the ids that share the prefix (ties
 * among those past the 7 bytes), not every id of the scope.
 */
export function prefixQuery(agent: string | undefined, prefix: string): { index: string; prefix: string } {
  let k = 0;
  for (const w of ORDER_WINDOWS) if (w < prefix.length) k = w;
  return k === 0 ? { index: 'scoped_order', prefix: scopedOrder(agent, prefix) } : { index: `scoped_order_${k}`, prefix: windowValue(agent, prefix, k)! };
}

/**
 * The deeper read of a tie among many ids (SecondaryKeys.deeper): the ids of `key`'s scope that start with the
 * characters of its id that its value of `index` keeps whole (`known` units of the value), through the next
 * window — whose ordered bytes hold the id's characters from there on, so that a short prefix of ids that share a
 * long stem (`session-…`) reads as far as it needs in order, not the whole stem.
 */
function deeperRead(index: string, key: string, known: number): { index: string; prefix: string } | undefined {
  if (!index.startsWith('scoped_order')) return undefined;
  const { agent, id } = unscopeSessionId(key as ScopedSessionId);
  const k = index === 'scoped_order' ? 0 : Number(index.slice('scoped_order_'.length));
  const value = k === 0 ? scopedOrder(agent, id) : windowValue(agent, id, k);
  if (value === undefined) return undefined;
  // The value is a tag, then the id from k on: the id's characters it keeps whole.
  const idKnown = id.length - (value.length - known);
  let w = 0;
  for (const x of ORDER_WINDOWS) if (x > k && x <= idKnown) w = x;
  return w === 0 ? undefined : { index: `scoped_order_${w}`, prefix: windowValue(agent, id.slice(0, idKnown), w)! };
}

export const SESSION_STORE: StoreSpec<Sessions> = {
  file: 'sessions.jsonl',
  vocabulary: SESSION_VOCABULARY,
  initial: () => new Map(),
  evolve,
  keyOf: (record) => (typeof record.data?.id === 'string' ? record.data.id : undefined),
  tally: ACTIVITY_TALLY,
  sealed: SESSION_SEALED,
  // A put with created_at, an import and a delete each determine the session alone (a closed session is never put).
  resets: (record) =>
    (record.ev === E.put && typeof record.data === 'object' && record.data !== null && 'created_at' in record.data) ||
    record.ev === E.imported ||
    record.ev === E.deleted,
  // What filtered queries look up (store.ts): an agent's sessions, the sessions that may be stranded (neither closed nor archived, SPEC §4) by when they were
  // last written, and the open ones by when they expire (reap). A closed session has neither time. A limited list reads newest first by the time of the last
  // write: the sessions that may be stranded (--stranded) and the sessions a plain list shows (active, handed off), each also among the unscoped and the scoped
  // ones apart, so that a caller without an agent reads its own and counts those it does not see (hidden_scoped) from the index alone. By logical id (a get's
  // hint); each scope's ids in order (completion); every session by its last write (--all), by status and last write (status-key.ts), and by time and key
  // (tie-key.ts).
  secondary: {
    names: SESSION_INDEXES,
    version: 9,
    prefixed: ['scoped_order', ...ORDER_WINDOWS.map((k) => `scoped_order_${k}`), TIED_INDEX],
    deeper: deeperRead,
    tied: tiedRead,
    values: (sessions, key) => {
      const r = sessions.get(key as ScopedSessionId);
      if (r === undefined) return SESSION_INDEXES.map(() => undefined);
      const open = !isTerminal(r.status);
      const { agent, id } = unscopeSessionId(r.key);
      const updated = tryParseTime(r.updated_at);
      // An archived session was parked on purpose: never stranded, so not in the stranded ranges.
      const openUpdated = open && r.status !== 'archived' ? updated : undefined;
      const listedUpdated = r.status === 'active' || r.status === 'handed_off' ? updated : undefined;
      const unscoped = agent === undefined;
      return [
        agent,
        openUpdated,
        open ? tryParseTime(r.expires_at) : undefined,
        unscoped ? openUpdated : undefined,
        listedUpdated,
        unscoped ? listedUpdated : undefined,
        unscoped ? undefined : openUpdated,
        unscoped ? undefined : listedUpdated,
        id,
        scopedOrder(agent, id),
        ...ORDER_WINDOWS.map((k) => windowValue(agent, id, k)),
        updated,
        unscoped ? updated : undefined,
        unscoped ? undefined : updated,
        ...statusValues(r, unscoped, updated),
        tiedValue(r.key, updated),
      ];
    },
  },
  live: (sessions): SessionDraft[] => [...sessions.values()].map((r) => ({ ev: E.imported, data: toImported(r), actor: r.actor ?? undefined })),
  liveBytes: (sessions) => {
    let total = 0;
    for (const r of sessions.values()) total += r.bytes + 200;
    return total;
  },
};
