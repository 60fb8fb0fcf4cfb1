// A limited session list that reads only the rows it shows: newest first through the store's index, with how
// many sessions match in all (from the index, without reading them), for a list that stops early and says
// how many more there are (SPEC §8).
import { DEFAULT_THRESHOLDS } from './freshness';
import { isVisible, listSessions, type ListFilter, type Listing } from './query';
import { SESSION_STORE, type SessionRecord, type Sessions } from './fold';
import { statusRange } from './status-key';
import { SESSION_STATES, type SessionStatus } from './machine';
import type { SessionScope as Scope } from './store';
import type { ScopedSessionId } from '../../shared/ids';

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
  opts: { count?: boolean; statuses?: readonly SessionStatus[] | undefined } = {},
): Promise<LimitedListing | undefined> {
  const read = scope.dir.readNewest?.bind(scope.dir);
  if (read === undefined || limit <= 0 || (filter.all && filter.stranded) || (scope.agent !== undefined && !filter.allAgents)) return undefined;
  if (filter.archived || opts.statuses !== undefined) return listByStatus(scope, filter, limit, opts);
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

/**
 * A limited list of some statuses (`--status`, `--archived`): each status's range of `status_updated` (the
 * caller's scope's: the unscoped ones, or every one with --all-agents) read newest first until it has `limit`
 * rows, the rows of all merged, and how many there are counted in the index. A caller without an agent counts
 * the scoped sessions it does not see as a replay does: those the filter without the statuses shows (--archived:
 * the archived ones; --status: every one, as --all).
 */
async function listByStatus(
  scope: Scope,
  filter: Omit<ListFilter, 'agent'>,
  limit: number,
  opts: { count?: boolean; statuses?: readonly SessionStatus[] | undefined },
): Promise<LimitedListing | undefined> {
  const read = scope.dir.readNewest!.bind(scope.dir);
  if (filter.stranded || (filter.archived && opts.statuses !== undefined)) return undefined;
  const statuses = opts.statuses ?? (['archived'] as const);
  const f: ListFilter = { ...filter, agent: scope.agent };
  const wanted = (r: { status: string }) => (statuses as readonly string[]).includes(r.status);
  const visible = (sessions: Sessions) => {
    let n = 0;
    for (const r of sessions.values()) if (wanted(r) && isVisible(r.key, f)) n++;
    return n;
  };
  const count = opts.count !== false;
  const own = filter.allAgents ? 'status_updated' : 'unscoped_status_updated';
  const merged: Sessions = new Map<ScopedSessionId, SessionRecord>();
  let total: number | undefined = 0;
  let replayed = false;
  for (const status of new Set(statuses)) {
    const shown = await read(SESSION_STORE, { index: own, ...statusRange(status), count }, (s) => visible(s) >= limit);
    for (const [k, r] of shown.state) merged.set(k, r);
    if (shown.total === undefined) replayed = true;
    total = shown.total === undefined || total === undefined ? undefined : total + shown.total;
  }
  const listing = listSessions(merged, f, scope.now, scope.thresholds);
  const rows = listing.sessions.filter(wanted);
  const sessions = rows.slice(0, limit);
  // Counted, but no total: the store replayed, and its state holds every row.
  if (replayed && count) return { sessions, hidden_scoped: listing.hidden_scoped, total: rows.length };
  let hidden = 0;
  if (!filter.allAgents) {
    const counted = await hiddenScoped(scope, filter);
    if (counted === undefined && !count) return undefined;
    hidden = counted ?? listing.hidden_scoped;
  }
  return { sessions, hidden_scoped: hidden, total };
}

/** How many scoped sessions the filter (without statuses) shows, from the index; undefined when the store replayed. */
async function hiddenScoped(scope: Scope, filter: Omit<ListFilter, 'agent'>): Promise<number | undefined> {
  const statuses: readonly SessionStatus[] = filter.archived ? ['archived'] : filter.all ? SESSION_STATES : ['active', 'handed_off'];
  let total = 0;
  for (const status of statuses) {
    const scoped = await scope.dir.readNewest!(SESSION_STORE, { index: 'scoped_status_updated', ...statusRange(status) }, () => true);
    if (scoped.total === undefined) return undefined;
    total += scoped.total;
  }
  return total;
}
