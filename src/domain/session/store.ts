// The session store: commands in, results out; replay and decisions over the journal layer.
import type { JournalStore } from '../../journal/core/store-boundary';
import type { IndexQuery } from '../../journal/codec/store-spec';
import { scopeSessionId, unscopeSessionId, type AgentName, type LogicalSessionId, type ScopedSessionId } from '../../shared/ids';
import { formatTime, type Instant } from '../../shared/time';
import {
  decideArchive,
  decideClose,
  decideDelete,
  decideImport,
  decidePut,
  decideReap,
  decideTouch,
  decideUnarchive,
  requireSession,
  type CloseCommand,
  type SessionImportSummary,
  type PutCommand,
} from './decide';
import { DEFAULT_THRESHOLDS, type FreshnessThresholds } from './freshness';
import { formatExportLine, parseImportLines, type ImportOptions } from './transfer-lines';
import { isVisible, listSessions, visibleRecords, type ListFilter, type Listing } from './query';
import type { SessionDraft } from './events';
import { nextRecord, prefixQuery, SESSION_STORE, type SessionRecord, type Sessions } from './fold';
import { stateText, viewSession, type SessionView } from './view';

export interface SessionScope {
  readonly dir: JournalStore;
  readonly agent: AgentName | undefined;
  readonly actor?: string | undefined;
  readonly now: Instant;
  readonly thresholds?: FreshnessThresholds | undefined;
}

export const keyFor = (scope: SessionScope, id: LogicalSessionId): ScopedSessionId => scopeSessionId(scope.agent, id);

const view = (scope: SessionScope, r: SessionRecord) => viewSession(r, scope.now, scope.thresholds);

/** A decision over the sessions: the events to append, and the answer read from the sessions they make. */
interface Decided<T> {
  readonly events: readonly SessionDraft[];
  readonly answer: (after: SessionsAfter) => T;
}
type SessionsAfter = (key: ScopedSessionId) => SessionRecord | undefined;

/** What a transaction reads: one session (through the key index), the sessions an index names, or all. */
type Reads = { readonly key: ScopedSessionId } | { readonly indexed: IndexQuery } | 'all';

/**
 * The one handler of every session write: under the lock, load what `reads` names, decide, answer from the
 * sessions as the events leave them (folded here by the store's own nextRecord, never read back from the
 * loaded map), then append the events as one batch.
 */
function transact<T>(scope: SessionScope, reads: Reads, decide: (sessions: Sessions) => Decided<T>): Promise<T> {
  return scope.dir.write(async (tx) => {
    const sessions =
      reads === 'all'
        ? await tx.load(SESSION_STORE)
        : 'key' in reads
          ? await tx.loadKey(SESSION_STORE, reads.key)
          : await tx.loadIndexed(SESSION_STORE, reads.indexed);
    const { events, answer } = decide(sessions);
    const result = answer(sessionsAfter(sessions, events, tx.ts));
    if (events.length > 0) tx.append(SESSION_STORE, events);
    return result;
  }, formatTime(scope.now));
}

function sessionsAfter(sessions: Sessions, events: readonly SessionDraft[], ts: string): SessionsAfter {
  const changed = new Map<ScopedSessionId, SessionRecord | undefined>();
  for (const event of events) {
    const key = event.data.id as ScopedSessionId;
    const before = changed.has(key) ? changed.get(key) : sessions.get(key);
    changed.set(key, nextRecord(key, before, event, { ts: event.ts ?? ts, actor: event.actor ?? null, bytes: 0 }));
  }
  return (key) => (changed.has(key) ? changed.get(key) : sessions.get(key));
}

/** One session's write, answered with its view afterwards. */
function writeOne(
  scope: SessionScope,
  id: LogicalSessionId,
  decide: (sessions: Sessions, key: ScopedSessionId) => readonly SessionDraft[],
): Promise<SessionView> {
  const key = keyFor(scope, id);
  return transact(scope, { key }, (sessions) => ({ events: decide(sessions, key), answer: (after) => view(scope, after(key)!) }));
}

export function putSession(scope: SessionScope, id: LogicalSessionId, cmd: Omit<PutCommand, 'key' | 'actor'>): Promise<SessionView> {
  return writeOne(scope, id, (sessions, key) => decidePut(sessions, { ...cmd, key, actor: scope.actor }, scope.now));
}

/**
 * The stored record of `id` in the caller's scope; when there is none, exit 3 with a hint naming the other
 * scopes that hold a session of that id (read by logical id through the index: only those sessions).
 */
async function findSession(scope: SessionScope, id: LogicalSessionId): Promise<SessionRecord> {
  const key = keyFor(scope, id);
  const record = (await scope.dir.readKey(SESSION_STORE, key)).get(key);
  if (record !== undefined) return record;
  const same = await scope.dir.readIndexed(SESSION_STORE, { index: 'logical_id', equals: id });
  const elsewhere = [...same.keys()].map((k) => unscopeSessionId(k)).filter((k) => k.id === id && k.agent !== scope.agent);
  const agents = elsewhere.map((k) => k.agent);
  return requireSession(same, key, agents);
}

export async function getSession(scope: SessionScope, id: LogicalSessionId): Promise<{ session: SessionView; state: string }> {
  const record = await findSession(scope, id);
  return { session: view(scope, record), state: stateText(record) };
}

/**
 * The sessions a listing needs: an agent's own (by the index), or those that may be stranded (neither closed
 * nor archived) last written before the stale threshold for --stranded; otherwise all. The listing filters exactly, whatever was read.
 */
function sessionsFor(scope: SessionScope, filter: Omit<ListFilter, 'agent'>): Promise<Sessions> {
  if (scope.agent !== undefined && !filter.allAgents) return scope.dir.readIndexed(SESSION_STORE, { index: 'agent', equals: scope.agent });
  if (filter.stranded) {
    const staleMs = (scope.thresholds ?? DEFAULT_THRESHOLDS).staleMs;
    return scope.dir.readIndexed(SESSION_STORE, { index: 'strandable_updated', atMost: Math.max(0, scope.now - staleMs) });
  }
  return scope.dir.read(SESSION_STORE);
}

export async function listStoredSessions(scope: SessionScope, filter: Omit<ListFilter, 'agent'>): Promise<Listing> {
  return listSessions(await sessionsFor(scope, filter), { ...filter, agent: scope.agent }, scope.now, scope.thresholds);
}

/**
 * The caller's session ids that start with `prefix`, in id order, at most `max` (shell completion): only the
 * sessions whose ids come first from the prefix on are read (the index's `scoped_order` and its windows), no view is made,
 * and nothing sorted but the ids that match.
 */
export async function sessionIdsStartingWith(scope: SessionScope, prefix: string, max: number): Promise<string[]> {
  const matching = (sessions: Sessions) => {
    const ids: string[] = [];
    for (const key of sessions.keys()) {
      const { agent, id } = unscopeSessionId(key);
      if (agent === scope.agent && id.startsWith(prefix)) ids.push(id);
    }
    return ids;
  };
  // A store without a read by prefix: as a listing reads them.
  const read = scope.dir.readPrefix?.bind(scope.dir);
  const sessions =
    read === undefined
      ? await sessionsFor(scope, { all: true, archived: false, stranded: false, allAgents: false })
      : await read(SESSION_STORE, prefixQuery(scope.agent, prefix), (s) => matching(s).length >= max);
  return matching(sessions).sort().slice(0, max);
}

export function archiveSession(scope: SessionScope, id: LogicalSessionId, reason: string | undefined): Promise<SessionView> {
  return writeOne(scope, id, (sessions, key) => decideArchive(sessions, key, reason, scope.actor));
}

export function unarchiveSession(scope: SessionScope, id: LogicalSessionId): Promise<SessionView> {
  return writeOne(scope, id, (sessions, key) => decideUnarchive(sessions, key, scope.actor));
}

export interface CloseResult {
  readonly outcome: 'closed' | 'already_closed';
  readonly session: SessionView;
}

export function closeSession(scope: SessionScope, id: LogicalSessionId, cmd: Omit<CloseCommand, 'actor'>): Promise<CloseResult> {
  const key = keyFor(scope, id);
  return transact(scope, { key }, (sessions) => {
    const { outcome, drafts } = decideClose(sessions, key, { ...cmd, actor: scope.actor });
    return { events: drafts, answer: (after) => ({ outcome, session: view(scope, after(key)!) }) };
  });
}

export interface TouchResult {
  readonly outcome: 'created' | 'touched' | 'closed';
  readonly session: SessionView;
}

/** Moves updated_at (state kept), or creates the session from `create` when there is none (SPEC §10.2). */
export function touchSession(scope: SessionScope, id: LogicalSessionId, create?: Omit<PutCommand, 'key' | 'actor'>): Promise<TouchResult> {
  const key = keyFor(scope, id);
  return transact(scope, { key }, (sessions) => {
    const { outcome, drafts } = decideTouch(sessions, key, create === undefined ? undefined : { ...create, key, actor: scope.actor }, scope.now, scope.actor);
    return { events: drafts, answer: (after) => ({ outcome, session: view(scope, after(key)!) }) };
  });
}

export interface ReapResult {
  /** Logical ids, as SPEC §8 fixes; `sessions` says whose each one is. */
  readonly reaped: string[];
  readonly count: number;
  readonly dry_run: boolean;
  readonly sessions: SessionView[];
}

/**
 * Closes every expired session as `expired`, all in one append. With an agent: that agent's sessions;
 * without one (a cron reaper): every session in the data directory, whatever its scope.
 */
export async function reapSessions(scope: SessionScope, opts: { dryRun: boolean }): Promise<ReapResult> {
  const visibility = { agent: scope.agent, allAgents: scope.agent === undefined };
  const decide = (sessions: Sessions) => decideReap(sessions, scope.now, (key) => isVisible(key, visibility), scope.actor);
  const result = (keys: ScopedSessionId[], after: SessionsAfter): ReapResult => ({
    reaped: keys.map((k) => unscopeSessionId(k).id),
    count: keys.length,
    dry_run: opts.dryRun,
    sessions: keys.map((k) => view(scope, after(k)!)),
  });
  // Only the open sessions that expire by now can be reaped: the index names them.
  const due: IndexQuery = { index: 'open_expires', atMost: Math.max(0, scope.now) };
  if (opts.dryRun) {
    const sessions = await scope.dir.readIndexed(SESSION_STORE, due);
    return result(decide(sessions).keys, (k) => sessions.get(k));
  }
  return transact(scope, { indexed: due }, (sessions) => {
    const { keys, drafts } = decide(sessions);
    return { events: drafts, answer: (after) => result(keys, after) };
  });
}

export function deleteSession(scope: SessionScope, id: LogicalSessionId): Promise<{ deleted: string; agent: string | null }> {
  const key = keyFor(scope, id);
  return transact(scope, { key }, (sessions) => ({
    events: decideDelete(sessions, key, scope.actor),
    answer: () => ({ deleted: id, agent: scope.agent ?? null }),
  }));
}

/** Export lines: with an agent, its sessions; without one (or with allAgents), every session. */
export async function exportSessions(scope: SessionScope, opts: { allAgents: boolean }): Promise<string[]> {
  const visibility = { agent: scope.agent, allAgents: opts.allAgents || scope.agent === undefined };
  return visibleRecords(await scope.dir.read(SESSION_STORE), visibility).map((r) => formatExportLine(view(scope, r), stateText(r)));
}

/** Validates every line, then writes them all in one locked, fsynced append (or nothing at all). */
export function importSessions(
  scope: SessionScope,
  input: Buffer,
  opts: { maxStateBytes: number; onLine?: ImportOptions['onLine'] },
): Promise<SessionImportSummary & { lines: number }> {
  const entries = parseImportLines(input, { agent: scope.agent, maxStateBytes: opts.maxStateBytes, now: scope.now, onLine: opts.onLine });
  return transact(scope, 'all', (sessions) => {
    const { drafts, summary } = decideImport(sessions, entries, scope.actor);
    return { events: drafts, answer: () => ({ ...summary, lines: entries.length }) };
  });
}
