// Pure decisions: given the sessions and a command, the events to append, or the error that refuses it.
// Time and ids come in as arguments; nothing here reads the clock or the disk.
import { conflict, invalid, notFound } from '../../shared/errors';
import { unscopeSessionId, type AgentName, type ScopedSessionId } from '../../shared/ids';
import { keptText } from '../../shared/free-text';
import { formatLaterTime, formatTime, tryParseTime, type Instant } from '../../shared/time';
import { allowedOps, isIdempotent, isTerminal, nextStatus, type SessionOp } from './machine';
import { SESSION_EVENTS as E, type CloseOutcome, type ImportedData, type PutData, type SessionDraft } from './events';
import { toImported, type SessionRecord, type Sessions } from './fold';
import type { ImportSummary } from '../import-summary';

export interface PutCommand {
  readonly key: ScopedSessionId;
  /** The state document's raw JSON text, already validated. */
  readonly state: string;
  readonly tokens?: number | undefined;
  readonly addTokens?: number | undefined;
  /** A ceiling on total_tokens (--max-tokens / CRUX_SESSION_TOKEN_BUDGET). */
  readonly maxTokens?: number | undefined;
  readonly ttlMs?: number | undefined;
  readonly expiresAt?: Instant | undefined;
  readonly actor?: string | undefined;
}

/** How a stored id reads in a message: `"x"`, or `"x" of agent "a"`. */
function describeKey(key: ScopedSessionId): string {
  const { agent, id } = unscopeSessionId(key);
  return agent === undefined ? `session ${JSON.stringify(id)}` : `session ${JSON.stringify(id)} of agent ${JSON.stringify(agent)}`;
}

/**
 * The record of `key`, or "not found" (exit 3). `elsewhere`: the other scopes that hold a session of the same
 * logical id (an agent, or undefined for none), which the hint names — the id is right, the agent is not.
 */
export function requireSession(sessions: Sessions, key: ScopedSessionId, elsewhere: readonly (AgentName | undefined)[] = []): SessionRecord {
  const record = sessions.get(key);
  if (record === undefined) throw notFound(`no ${describeKey(key)}`, elsewhereHint(elsewhere) ?? 'see `crux session list`');
  return record;
}

function elsewhereHint(scopes: readonly (AgentName | undefined)[]): string | undefined {
  const agents = scopes.filter((a) => a !== undefined).sort();
  const unscoped = scopes.includes(undefined);
  const parts: string[] = [];
  if (unscoped) parts.push('without an agent');
  if (agents.length > 0) parts.push(`under agent${agents.length > 1 ? 's' : ''} ${agents.map((a) => JSON.stringify(a)).join(', ')}`);
  if (parts.length === 0) return undefined;
  const one = agents.length === 1 ? `--agent ${shellWord(agents[0]!)}` : '--agent <name>';
  const how = agents.length === 0 ? 'leave --agent out' : unscoped ? `use ${one}, or leave --agent out` : `use ${one}`;
  return `it exists ${parts.join(' and ')}: ${how}`;
}

/** A name as one shell word: as it is when it is plain, else single-quoted. */
const shellWord = (name: string) => (/^[\w.@%+=:,/-]+$/.test(name) ? name : `'${name.replace(/'/g, `'\\''`)}'`);

/** Refuses `op` on `record` unless the machine allows it (exit 4 naming the state and the allowed ops). */
function requireMove(record: SessionRecord, op: SessionOp): void {
  if (nextStatus(record.status, op) !== undefined) return;
  const allowed = allowedOps(record.status);
  throw conflict(
    `cannot ${op} ${describeKey(record.key)}: it is ${record.status}`,
    allowed.length > 0 ? `the state ${record.status} allows: ${allowed.join(', ')}` : `${record.status} is final: nothing moves it, only delete removes it`,
  );
}

function checkTokens(total: number, maxTokens: number | undefined): void {
  if (!Number.isSafeInteger(total)) throw invalid(`total_tokens would overflow: ${total}`);
  if (maxTokens !== undefined && total > maxTokens) {
    throw invalid(`total_tokens would be ${total}, over the budget of ${maxTokens}`, 'raise --max-tokens / CRUX_SESSION_TOKEN_BUDGET, or close the session');
  }
}

export function decidePut(sessions: Sessions, cmd: PutCommand, now: Instant): SessionDraft[] {
  const current = sessions.get(cmd.key);
  if (current !== undefined) requireMove(current, 'put');
  let total = cmd.tokens ?? current?.total_tokens ?? 0;
  if (cmd.addTokens !== undefined) total += cmd.addTokens;
  checkTokens(total, cmd.maxTokens);
  let expiresAt = current?.expires_at ?? null;
  if (cmd.ttlMs !== undefined) expiresAt = formatLaterTime(now, cmd.ttlMs, '--ttl');
  if (cmd.expiresAt !== undefined) expiresAt = formatTime(cmd.expiresAt);
  const data: PutData = {
    id: cmd.key,
    state: cmd.state,
    total_tokens: total,
    expires_at: expiresAt,
    created_at: current?.created_at ?? formatTime(now),
    handoff_id: current?.handoff_id ?? null,
  };
  return [{ ev: E.put, data, actor: cmd.actor }];
}

export function decideArchive(sessions: Sessions, key: ScopedSessionId, reason: string | undefined, actor?: string): SessionDraft[] {
  requireMove(requireSession(sessions, key), 'archive');
  return [{ ev: E.archived, data: { id: key, reason: reason === undefined || reason === '' ? null : keptText(reason) }, actor }];
}

export function decideUnarchive(sessions: Sessions, key: ScopedSessionId, actor?: string): SessionDraft[] {
  requireMove(requireSession(sessions, key), 'unarchive');
  return [{ ev: E.unarchived, data: { id: key }, actor }];
}

export interface CloseCommand {
  readonly outcome: Exclude<CloseOutcome, 'expired'>;
  readonly summary?: string | undefined;
  readonly actor?: string | undefined;
}

export interface CloseDecision {
  /** `already_closed` when the session was closed before: no events, the original record stands. */
  readonly outcome: 'closed' | 'already_closed';
  readonly drafts: SessionDraft[];
}

/** Close exactly once: decided under the lock after replay, so of N racing closes one writes. */
export function decideClose(sessions: Sessions, key: ScopedSessionId, cmd: CloseCommand): CloseDecision {
  const record = requireSession(sessions, key);
  if (isIdempotent(record.status, 'close')) return { outcome: 'already_closed', drafts: [] };
  requireMove(record, 'close');
  const summary = cmd.summary === undefined || cmd.summary === '' ? null : keptText(cmd.summary);
  return { outcome: 'closed', drafts: [{ ev: E.closed, data: { id: key, outcome: cmd.outcome, summary }, actor: cmd.actor }] };
}

export interface TouchDecision {
  /** `created` from `create`, `touched` (updated_at moved), or `closed`: nothing written, the record stands. */
  readonly outcome: 'created' | 'touched' | 'closed';
  readonly drafts: SessionDraft[];
}

/** A sign of life: the session's updated_at moves, state kept; a missing one is created from `create` (else 3). */
export function decideTouch(sessions: Sessions, key: ScopedSessionId, create: PutCommand | undefined, now: Instant, actor?: string): TouchDecision {
  const record = sessions.get(key);
  if (record === undefined && create !== undefined) return { outcome: 'created', drafts: decidePut(sessions, create, now) };
  if (isIdempotent(requireSession(sessions, key).status, 'touch')) return { outcome: 'closed', drafts: [] };
  requireMove(record!, 'touch');
  return { outcome: 'touched', drafts: [{ ev: E.touched, data: { id: key }, actor }] };
}

/** Is `record` past its expiry at `now` (and so reapable, unless already closed)? */
function isExpired(record: SessionRecord, now: Instant): boolean {
  const at = tryParseTime(record.expires_at);
  return at !== undefined && at <= now && !isTerminal(record.status);
}

export interface ReapDecision {
  /** The stored ids reaped, sorted. */
  readonly keys: ScopedSessionId[];
  readonly drafts: SessionDraft[];
}

/** Every non-closed session past its expiry (among those `include` accepts) closed as `expired`. */
export function decideReap(sessions: Sessions, now: Instant, include: (key: ScopedSessionId) => boolean, actor?: string): ReapDecision {
  const keys = [...sessions.values()]
    .filter((r) => include(r.key) && isExpired(r, now) && nextStatus(r.status, 'close') !== undefined)
    .map((r) => r.key)
    .sort();
  const drafts = keys.map((key): SessionDraft => ({ ev: E.closed, data: { id: key, outcome: 'expired', summary: null }, actor }));
  return { keys, drafts };
}

/** Hard removal, from any state (the machine's REMOVING_OPS). */
export function decideDelete(sessions: Sessions, key: ScopedSessionId, actor?: string): SessionDraft[] {
  requireSession(sessions, key);
  return [{ ev: E.deleted, data: { id: key }, actor }];
}

/** The source side of a handoff: the session (in its owner's scope) moves to handed_off. */
export function decideHandOff(sessions: Sessions, key: ScopedSessionId, handoffId: string, actor?: string): SessionDraft[] {
  requireMove(requireSession(sessions, key), 'handoff');
  return [{ ev: E.handedOff, data: { id: key, handoff_id: handoffId }, actor }];
}

export interface ReceiveCommand {
  /** The package's session state, raw JSON text (already validated). */
  readonly state: string;
  readonly handoffId?: string | null | undefined;
  /** total_tokens for the landed session (default: the receiver's current count, or 0). */
  readonly tokens?: number | undefined;
  readonly expiresAt?: Instant | null | undefined;
  readonly actor?: string | undefined;
}

/**
 * The receiving side of a handoff: the state lands under the receiver's scoped id. A missing session is
 * created; an active or handed-off one is replaced (its state, the handoff id; created_at is kept); an
 * archived or closed one is refused (exit 4) by the machine's `receive` op.
 */
export function decideReceive(sessions: Sessions, key: ScopedSessionId, cmd: ReceiveCommand): SessionDraft[] {
  const current = sessions.get(key);
  if (current !== undefined) requireMove(current, 'receive');
  const total = cmd.tokens ?? current?.total_tokens ?? 0;
  checkTokens(total, undefined);
  const expires = cmd.expiresAt === undefined ? (current?.expires_at ?? null) : cmd.expiresAt === null ? null : formatTime(cmd.expiresAt);
  return [
    { ev: E.received, data: { id: key, state: cmd.state, total_tokens: total, expires_at: expires, handoff_id: cmd.handoffId ?? null }, actor: cmd.actor },
  ];
}

export interface ImportEntry {
  /** 1-based line of the import file, for messages. */
  readonly line: number;
  readonly data: ImportedData;
}

/** A session import also counts the lines identical to the stored session (nothing written for them). */
export interface SessionImportSummary extends ImportSummary {
  readonly unchanged: number;
}

/**
 * An import (a restore): each line replaces or creates its session whole. A line identical to the stored
 * record changes nothing, so importing the same backup twice writes nothing. A closed session is final:
 * a different record for it is refused (exit 4, with the line), as a put would be.
 */
export function decideImport(sessions: Sessions, entries: readonly ImportEntry[], actor?: string): { drafts: SessionDraft[]; summary: SessionImportSummary } {
  const drafts: SessionDraft[] = [];
  let created = 0;
  let replaced = 0;
  let unchanged = 0;
  for (const { line, data } of entries) {
    const current = sessions.get(data.id as ScopedSessionId);
    if (current !== undefined && JSON.stringify(toImported(current)) === JSON.stringify(data)) {
      unchanged += 1;
      continue;
    }
    // The machine's terminal state is final: an import restores any other state whole, never that one.
    if (current !== undefined && isTerminal(current.status)) {
      throw conflict(
        `line ${line}: ${describeKey(current.key)} is ${current.status} and differs from this line`,
        `${current.status} is final; delete it first to restore another record`,
      );
    }
    if (current === undefined) created += 1;
    else replaced += 1;
    drafts.push({ ev: E.imported, data, actor: data.actor ?? actor });
  }
  return { drafts, summary: { imported: created + replaced, created, replaced, unchanged } };
}
