// The overview's session counts (SPEC §12) from the store's index: every session by status, the open ones by
// freshness, and what needs attention — each a count of an index range (status-key.ts, fold.ts), none read; and the
// sessions each attention item shows, read from its own range (the recent failures newest first until the few
// shown, the expired, expiring and stranded ones whole). A replay counts the same (the differential tests).
import type { JournalStore } from '../../journal/core/store-boundary';
import type { NewestQuery } from '../../journal/codec/store-spec';
import type { Instant } from '../../shared/time';
import { closedWith, FAILED_OUTCOMES, judgeAttention, type Attention, type AttentionWindows } from './attention';
import { SESSION_STORE, type SessionRecord, type Sessions } from './fold';
import { DEFAULT_THRESHOLDS, type Freshness, type FreshnessThresholds } from './freshness';
import { SESSION_STATES, type SessionStatus } from './machine';
import { listSessions } from './query';
import { NO_TIME, statusRange } from './status-key';
import type { SessionView } from './view';

export interface SessionCounts {
  readonly total: number;
  readonly by_status: Record<string, number>;
  readonly by_freshness: Record<string, number>;
  readonly attention: Attention<SessionView>;
}

/** The order the counts' keys are written in, whichever way they were counted. */
export const FRESHNESS_ORDER: readonly Freshness[] = ['fresh', 'aging', 'stale', 'unknown', 'invalid'];
const OPEN: readonly SessionStatus[] = SESSION_STATES.filter((s) => s !== 'closed');
const MAX = Number.MAX_SAFE_INTEGER;
/** The attention items' sessions shown (judgeAttention's `keep`). */
const KEEP = 5;

/** `counts` without its zeros, its keys in `order`. */
export function ordered(counts: Record<string, number>, order: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of order) if ((counts[k] ?? 0) > 0) out[k] = counts[k]!;
  return out;
}

/**
 * Every session counted by status and freshness, and the attention items, through the store's index; undefined
 * when the store has no such read, or answered one by a replay (the caller then counts what it lists).
 */
export async function countSessions(
  dir: JournalStore,
  now: Instant,
  thresholds: FreshnessThresholds | undefined,
  windows: AttentionWindows,
): Promise<SessionCounts | undefined> {
  const read = dir.readNewest?.bind(dir);
  if (read === undefined) return undefined;
  const t = thresholds ?? DEFAULT_THRESHOLDS;
  const seen: Sessions = new Map();
  let replayed = false;
  /** How many entities the range holds; with `enough`, those it reads are kept (until enough). */
  const count = async (query: NewestQuery, enough: (s: Sessions) => boolean = () => true): Promise<number> => {
    const got = await read(SESSION_STORE, query, enough);
    if (got.total === undefined) replayed = true;
    for (const [k, r] of got.state) seen.set(k, r as SessionRecord);
    return got.total ?? 0;
  };
  const byStatus: Record<string, number> = {};
  for (const s of SESSION_STATES) byStatus[s] = await count({ index: 'status_updated', ...statusRange(s) });
  // Freshness (freshness.ts) by the age of the last write: fresh from -skew to freshMs, aging to staleMs, stale past it.
  const ranges: Record<Freshness, [number, number]> = {
    invalid: [now + t.skewMs + 1, MAX],
    fresh: [now - t.freshMs, now + t.skewMs],
    aging: [now - t.staleMs, now - t.freshMs - 1],
    stale: [NO_TIME + 1, now - t.staleMs - 1],
    unknown: [NO_TIME, NO_TIME],
  };
  const byFreshness: Record<string, number> = {};
  for (const f of FRESHNESS_ORDER) {
    const [from, to] = ranges[f];
    let n = 0;
    for (const s of OPEN) if (from <= to) n += await count({ index: 'status_updated', ...statusRange(s, from, to) });
    byFreshness[f] = n;
  }
  // The attention items: the failures since the window's start, newest first until the few shown; the rest whole.
  const failed = (s: Sessions) => listSessions(s, ALL, now, t).sessions.filter((v) => closedWith(v, FAILED_OUTCOMES, now, windows.recentMs)).length >= KEEP;
  const counts = {
    failed_recently: await count({ index: 'failed_closed', atLeast: now - windows.recentMs, atMost: MAX }, failed),
    expired_unreaped: await count({ index: 'open_expires', atMost: now }, () => false),
    expiring_soon: await count({ index: 'open_expires', atLeast: now + 1, atMost: now + windows.soonMs }, () => false),
    stranded: await count({ index: 'strandable_updated', atMost: now - t.staleMs - 1 }, () => false),
  };
  if (replayed) return undefined;
  const judged = judgeAttention(listSessions(seen, ALL, now, t).sessions, now, windows, KEEP);
  const attention = Object.fromEntries(Object.entries(judged).map(([k, item]) => [k, { ...item, count: counts[k as keyof typeof counts] }]));
  const total = SESSION_STATES.reduce((n, s) => n + byStatus[s]!, 0);
  return {
    total,
    by_status: ordered(byStatus, SESSION_STATES),
    by_freshness: ordered(byFreshness, FRESHNESS_ORDER),
    attention: attention as unknown as Attention<SessionView>,
  };
}

const ALL = { all: true, archived: false, stranded: false, agent: undefined, allAgents: true } as const;
