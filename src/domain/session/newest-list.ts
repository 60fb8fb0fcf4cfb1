// A limited session list that reads only the rows it shows: newest first through the store's index, with how
// many sessions match in all (from the index, without reading them), for a list that stops early and says
// how many more there are (SPEC §8).
import type { JournalStore } from '../../journal/core/store-boundary';
import type { FreshnessThresholds } from './freshness';
import { DEFAULT_THRESHOLDS } from './freshness';
import { listSessions, type ListFilter, type Listing } from './query';
import { SESSION_STORE, type Sessions } from './fold';
import type { AgentName } from '../../shared/ids';
import type { Instant } from '../../shared/time';

interface Scope {
  readonly dir: JournalStore;
  readonly agent: AgentName | undefined;
  readonly now: Instant;
  readonly thresholds?: FreshnessThresholds | undefined;
}

/** A listing cut to its first `limit` rows, with `total`: how many rows the whole listing has (when counted). */
export type LimitedListing = Listing & { readonly total: number | undefined };

/**
 * The first `limit` rows of the listing (newest first), reading only them, when the store can serve it: a
 * plain list, --all or --stranded, without an agent's own index (an agent's list reads its index already); else
 * undefined (the caller lists everything and cuts). `count: false`: the caller says nothing of the rows past
 * the limit (a script's --json or a pipe), so how many there are is not counted (total undefined) and the
 * store reads the pages of the rows shown only.
 */
export async function listNewest(
  scope: Scope,
  filter: Omit<ListFilter, 'agent'>,
  limit: number,
  opts: { count?: boolean } = {},
): Promise<LimitedListing | undefined> {
  const read = scope.dir.readNewest?.bind(scope.dir);
  if (read === undefined || limit <= 0 || filter.archived || (filter.all && filter.stranded) || (scope.agent !== undefined && !filter.allAgents))
    return undefined;
  const staleMs = (scope.thresholds ?? DEFAULT_THRESHOLDS).staleMs;
  // Stale means older than the threshold: at most now - staleMs - 1.
  const atMost = filter.stranded ? scope.now - staleMs - 1 : Number.MAX_SAFE_INTEGER;
  if (atMost < 0) return undefined;
  // --all: every session by its last write (closed and archived ones too).
  const name = filter.stranded ? 'strandable_updated' : filter.all ? 'all_updated' : 'listed_updated';
  const f: ListFilter = { ...filter, agent: scope.agent };
  const visible = (sessions: Sessions) => listSessions(sessions, f, scope.now, scope.thresholds).sessions.length;
  // A caller without an agent sees the unscoped sessions only: read those, and count the scoped ones as hidden.
  const own = filter.allAgents ? name : `unscoped_${name}`;
  const count = opts.count !== false;
  const shown = await read(SESSION_STORE, { index: own, atMost, count }, (s) => visible(s) >= limit);
  const listing = listSessions(shown.state, f, scope.now, scope.thresholds);
  const sessions = listing.sessions.slice(0, limit);
  // Counted, but no total: the store replayed, and its state holds every row.
  if (shown.total === undefined && count) return { ...listing, sessions, total: listing.sessions.length };
  let hidden = 0;
  if (!filter.allAgents) {
    const scoped = await read(SESSION_STORE, { index: `scoped_${name}`, atMost }, () => true);
    // Not counted, and the scoped ones not counted either (no index): whether the rows read are all of them is
    // not known here, so the caller lists everything.
    if (scoped.total === undefined && !count) return undefined;
    hidden = scoped.total ?? listing.hidden_scoped;
  }
  return { sessions, hidden_scoped: hidden, total: shown.total };
}
