// The session store's folded state: one record per stored (scoped) id, built by evolve from the journal.
import type { StoreSpec } from '../../journal/store-spec';
import type { EventDraft, JournalRecord } from '../../journal/record';
import type { LinePosition } from '../../journal/scan';
import { unscopeSessionId, type ScopedSessionId } from '../../shared/ids';
import { tryParseTime } from '../../shared/time';
import { SESSION_STATES, type SessionStatus } from './machine';
import { CLOSE_OUTCOMES, SESSION_EVENTS as E, SESSION_VOCABULARY, type CloseOutcome, type ImportedData } from './events';

export interface SessionRecord {
  readonly key: ScopedSessionId;
  state: string;
  status: SessionStatus;
  created_at: string | null;
  updated_at: string | null;
  total_tokens: number;
  expires_at: string | null;
  archived_at: string | null;
  archive_reason: string | null;
  actor: string | null;
  closed_at: string | null;
  outcome: CloseOutcome | null;
  summary: string | null;
  handoff_id: string | null;
  /** Journal bytes of the record that carries the state: the compaction estimate. */
  bytes: number;
}

export type Sessions = Map<ScopedSessionId, SessionRecord>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);

function evolve(sessions: Sessions, record: JournalRecord, at: LinePosition): void {
  const d = record.data;
  if (d === null || typeof d !== 'object' || typeof d.id !== 'string') return;
  const key = d.id as ScopedSessionId;
  const current = sessions.get(key);
  const actor = record.actor ?? null;
  switch (record.ev) {
    case E.put:
    case E.received: {
      if (typeof d.state !== 'string' || current?.status === 'closed') return;
      sessions.set(key, {
        ...(current ?? emptyRecord(key, record.ts)),
        // A put carries what it keeps of the session it replaces (older records do not: keep the current);
        // a received session carries the handoff it came with.
        ...('created_at' in d && record.ev === E.put ? { created_at: str(d.created_at) } : {}),
        ...('handoff_id' in d ? { handoff_id: str(d.handoff_id) } : {}),
        state: d.state,
        status: 'active',
        updated_at: record.ts,
        total_tokens: count(d.total_tokens),
        expires_at: str(d.expires_at),
        archived_at: null,
        archive_reason: null,
        actor,
        bytes: at.length,
      });
      return;
    }
    case E.imported: {
      if (typeof d.state !== 'string') return;
      sessions.set(key, fromImported(key, d as ImportedData, at.length));
      return;
    }
    case E.archived:
      if (current === undefined || current.status === 'closed') return;
      Object.assign(current, { status: 'archived', archived_at: record.ts, archive_reason: str(d.reason), actor });
      return;
    case E.unarchived:
      if (current === undefined || current.status !== 'archived') return;
      Object.assign(current, { status: 'active', archived_at: null, archive_reason: null, actor });
      return;
    case E.handedOff:
      if (current === undefined || current.status === 'closed') return;
      Object.assign(current, { status: 'handed_off', handoff_id: str(d.handoff_id), actor });
      return;
    case E.closed:
      // The first close wins; a later one (a duplicate line) changes nothing.
      if (current === undefined || current.status === 'closed') return;
      Object.assign(current, {
        status: 'closed',
        closed_at: record.ts,
        outcome: CLOSE_OUTCOMES.includes(d.outcome) ? d.outcome : 'completed',
        summary: str(d.summary),
        actor,
      });
      return;
    case E.touched:
      if (current === undefined || current.status === 'closed') return;
      current.updated_at = record.ts;
      return;
    case E.deleted:
      sessions.delete(key);
      return;
  }
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
  return {
    key,
    state: d.state,
    status: SESSION_STATES.includes(d.status) ? d.status : 'active',
    created_at: str(d.created_at),
    updated_at: str(d.updated_at),
    total_tokens: count(d.total_tokens),
    expires_at: str(d.expires_at),
    archived_at: str(d.archived_at),
    archive_reason: str(d.archive_reason),
    actor: str(d.actor),
    closed_at: str(d.closed_at),
    outcome: CLOSE_OUTCOMES.includes(d.outcome as CloseOutcome) ? d.outcome : null,
    summary: str(d.summary),
    handoff_id: str(d.handoff_id),
    bytes,
  };
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

export const SESSION_INDEXES = ['agent', 'open_updated', 'open_expires'] as const;

export const SESSION_STORE: StoreSpec<Sessions> = {
  file: 'sessions.jsonl',
  vocabulary: SESSION_VOCABULARY,
  initial: () => new Map(),
  evolve,
  keyOf: (record) => (typeof record.data?.id === 'string' ? record.data.id : undefined),
  // A put that carries created_at, an import and a delete each determine the session on their own (a put
  // on a closed session is never written: the machine refuses it).
  resets: (record) =>
    (record.ev === E.put && typeof record.data === 'object' && record.data !== null && 'created_at' in record.data) ||
    record.ev === E.imported ||
    record.ev === E.deleted,
  // What filtered queries look up (store.ts): an agent's sessions, and the open sessions by when they were
  // last written (stranded) and by when they expire (reap). A closed session has neither time.
  secondary: {
    names: SESSION_INDEXES,
    version: 1,
    values: (sessions, key) => {
      const r = sessions.get(key as ScopedSessionId);
      if (r === undefined) return [undefined, undefined, undefined];
      const open = r.status !== 'closed';
      return [unscopeSessionId(r.key).agent, open ? tryParseTime(r.updated_at) : undefined, open ? tryParseTime(r.expires_at) : undefined];
    },
  },
  live: (sessions): EventDraft[] =>
    [...sessions.values()].map((r) => ({ ev: E.imported, data: toImported(r), actor: r.actor ?? undefined })),
  liveBytes: (sessions) => {
    let total = 0;
    for (const r of sessions.values()) total += r.bytes + 200;
    return total;
  },
};
