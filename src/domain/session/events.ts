// The session journal's vocabulary: every event sessions.jsonl may contain, and its payload.
import { declareVocabulary } from '../../journal/store-spec';
import type { SessionStatus } from './machine';

export const SESSION_EVENTS = {
  put: 'session.put',
  archived: 'session.archived',
  unarchived: 'session.unarchived',
  handedOff: 'session.handed_off',
  closed: 'session.closed',
  deleted: 'session.deleted',
  imported: 'session.imported',
  received: 'session.received',
  /** A sign of life (a lifecycle hook): updated_at moves, nothing else does. */
  touched: 'session.touched',
} as const;

export const SESSION_VOCABULARY = declareVocabulary(Object.values(SESSION_EVENTS));

export type CloseOutcome = 'completed' | 'failed' | 'abandoned' | 'expired';
export const CLOSE_OUTCOMES: readonly CloseOutcome[] = ['completed', 'failed', 'abandoned', 'expired'];

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
  readonly handoff_id: string;
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
