// A session as commands show it (the S of SPEC §8): logical id, agent, status, times, freshness.
import { unscopeSessionId } from '../../shared/ids';
import type { Instant } from '../../shared/time';
import { openSealed, sealedBytes, shownSealed } from '../../journal/codec/cipher';
import { judgeFreshness, type Freshness, type FreshnessThresholds } from './freshness';
import type { SessionRecord } from './fold';
import { SESSIONS_FILE } from './events';

export interface SessionView {
  readonly session_id: string;
  readonly agent: string | null;
  readonly status: string;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly total_tokens: number;
  readonly expires_at: string | null;
  readonly archived: boolean;
  readonly archived_at: string | null;
  readonly archive_reason: string | null;
  readonly actor: string | null;
  /** How recent the last write is; null for a closed session (freshness describes open sessions, SPEC §4). */
  readonly freshness: Freshness | null;
  readonly closed_at: string | null;
  readonly outcome: string | null;
  readonly summary: string | null;
  readonly handoff_id: string | null;
  readonly state_bytes: number;
}

export function viewSession(r: SessionRecord, now: Instant, thresholds?: FreshnessThresholds): SessionView {
  const { agent, id } = unscopeSessionId(r.key);
  return {
    session_id: id,
    agent: agent ?? null,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
    total_tokens: r.total_tokens,
    expires_at: r.expires_at,
    archived: r.status === 'archived',
    archived_at: r.archived_at,
    archive_reason: shownSealed(r.archive_reason, { file: SESSIONS_FILE, entity: r.key, field: 'archive_reason' }),
    actor: r.actor,
    freshness: r.status === 'closed' ? null : judgeFreshness(r.updated_at, now, thresholds),
    closed_at: r.closed_at,
    outcome: r.outcome,
    summary: shownSealed(r.summary, { file: SESSIONS_FILE, entity: r.key, field: 'summary' }),
    handoff_id: r.handoff_id,
    state_bytes: sealedBytes(r.state),
  };
}

/** A session's state bytes as stored, opened on an encrypted store (exit 6 without its key: SPEC §13). */
export const stateText = (r: SessionRecord): string => openSealed(r.state, { file: SESSIONS_FILE, entity: r.key, field: 'state' });
