// The session journal's events: a closed union, one payload type per name; the vocabulary is derived from it
// and every payload is parsed once, when a record is read (one that does not parse is a bad line).
import { declareEvents, type DraftOf, type EventOf, type SealedFields } from '../../journal/codec/store-spec';
import { SESSION_STATES, type SessionStatus } from './machine';

/** How a session ends: a caller says completed, failed or abandoned; expired is the reaper's. */
export const CALLER_CLOSE_OUTCOMES = ['completed', 'failed', 'abandoned'] as const;
export const CLOSE_OUTCOMES = [...CALLER_CLOSE_OUTCOMES, 'expired'] as const;
export type CloseOutcome = (typeof CLOSE_OUTCOMES)[number];

/** Payloads carry resulting values, never deltas, so that replaying a record twice changes nothing. */
export interface PutData {
  readonly id: string;
  /** The state document, exactly as given (its raw JSON text). */
  readonly state: string;
  readonly total_tokens: number;
  readonly expires_at: string | null;
  /**
   * What a put keeps of the session it replaces, so that the put alone determines the session (the key
   * index then reads a session from its last put). Absent in records written before they were carried.
   */
  readonly created_at?: string | null;
  readonly handoff_id?: string | null;
}
export interface ArchivedData {
  readonly id: string;
  readonly reason: string | null;
}
export interface IdData {
  readonly id: string;
}
export interface HandedOffData {
  readonly id: string;
  readonly handoff_id: string | null;
}
/** An accepted handoff's session, landed under the receiver's scope (created, or replacing the state). */
export interface ReceivedData {
  readonly id: string;
  readonly state: string;
  readonly total_tokens: number;
  readonly expires_at: string | null;
  readonly handoff_id: string | null;
}
export interface ClosedData {
  readonly id: string;
  readonly outcome: CloseOutcome;
  readonly summary: string | null;
}
/** A whole session as export prints it; import and compaction write it back as one event. */
export interface ImportedData {
  readonly id: string;
  readonly state: string;
  readonly status: SessionStatus;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly total_tokens: number;
  readonly expires_at: string | null;
  readonly archived_at: string | null;
  readonly archive_reason: string | null;
  readonly actor: string | null;
  readonly closed_at: string | null;
  readonly outcome: CloseOutcome | null;
  readonly summary: string | null;
  readonly handoff_id: string | null;
}

/** Every event sessions.jsonl may contain, and its payload. */
export interface SessionEventMap {
  'session.put': PutData;
  'session.archived': ArchivedData;
  'session.unarchived': IdData;
  'session.handed_off': HandedOffData;
  'session.closed': ClosedData;
  'session.deleted': IdData;
  'session.imported': ImportedData;
  'session.received': ReceivedData;
  /** A sign of life (a lifecycle hook): updated_at moves, nothing else does. */
  'session.touched': IdData;
}
export type SessionEvent = EventOf<SessionEventMap>;
export type SessionDraft = DraftOf<SessionEventMap>;

/** The names by role, for the code that writes them. */
export const SESSION_EVENTS = {
  put: 'session.put',
  archived: 'session.archived',
  unarchived: 'session.unarchived',
  handedOff: 'session.handed_off',
  closed: 'session.closed',
  deleted: 'session.deleted',
  imported: 'session.imported',
  received: 'session.received',
  touched: 'session.touched',
} as const satisfies Record<string, keyof SessionEventMap>;

// Parsers are as lenient as replay always was with the optional parts (a missing count is 0, a missing text
// null) and strict with what a record is about: its id, its state text, its status.
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : 0);
const outcome = (v: unknown): CloseOutcome | null => ((CLOSE_OUTCOMES as readonly unknown[]).includes(v) ? (v as CloseOutcome) : null);

function idOnly(d: any): IdData | string {
  return typeof d.id === 'string' ? { id: d.id } : 'no session id';
}

function stateful<T>(d: any, build: () => T): T | string {
  if (typeof d.id !== 'string') return 'no session id';
  if (typeof d.state !== 'string') return 'no state text';
  return build();
}

const SESSION = declareEvents<SessionEventMap>({
  'session.put': (d) =>
    stateful(
      d,
      (): PutData => ({
        id: d.id,
        state: d.state,
        total_tokens: count(d.total_tokens),
        expires_at: text(d.expires_at),
        ...('created_at' in d ? { created_at: text(d.created_at) } : {}),
        ...('handoff_id' in d ? { handoff_id: text(d.handoff_id) } : {}),
      }),
    ),
  'session.archived': (d) => (typeof d.id === 'string' ? { id: d.id, reason: text(d.reason) } : 'no session id'),
  'session.unarchived': idOnly,
  'session.handed_off': (d) => (typeof d.id === 'string' ? { id: d.id, handoff_id: text(d.handoff_id) } : 'no session id'),
  // A close of an unknown outcome is still a close (the first close wins; the outcome is what it says, or completed).
  'session.closed': (d) => (typeof d.id === 'string' ? { id: d.id, outcome: outcome(d.outcome) ?? 'completed', summary: text(d.summary) } : 'no session id'),
  'session.deleted': idOnly,
  'session.imported': (d) =>
    stateful(
      d,
      (): ImportedData => ({
        id: d.id,
        state: d.state,
        status: (SESSION_STATES as readonly unknown[]).includes(d.status) ? d.status : 'active',
        created_at: text(d.created_at),
        updated_at: text(d.updated_at),
        total_tokens: count(d.total_tokens),
        expires_at: text(d.expires_at),
        archived_at: text(d.archived_at),
        archive_reason: text(d.archive_reason),
        actor: text(d.actor),
        closed_at: text(d.closed_at),
        outcome: outcome(d.outcome),
        summary: text(d.summary),
        handoff_id: text(d.handoff_id),
      }),
    ),
  'session.received': (d) =>
    stateful(
      d,
      (): ReceivedData => ({ id: d.id, state: d.state, total_tokens: count(d.total_tokens), expires_at: text(d.expires_at), handoff_id: text(d.handoff_id) }),
    ),
  'session.touched': idOnly,
});

export const SESSION_VOCABULARY = SESSION.vocabulary;
/** A record as a session event, or why it is not one. */
export const parseSessionEvent = SESSION.parse;

/**
 * What lies sealed on an encrypted store (SPEC §13, journal/codec/cipher.ts): the state and every free text (an
 * archive reason, a close summary). Ids, statuses, outcome names, times, token counts stay plain.
 */
export const SESSIONS_FILE = 'sessions.jsonl';

export const SESSION_SEALED: SealedFields = {
  fields: {
    'session.put': { state: 'state' },
    'session.received': { state: 'state' },
    'session.imported': { state: 'state', archive_reason: 'archive_reason', summary: 'summary' },
    'session.archived': { reason: 'archive_reason' },
    'session.closed': { summary: 'summary' },
  },
  entity: (data) => String(data.id),
};
