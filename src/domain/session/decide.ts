// Pure decisions: given the sessions and a command, the events to append, or the error that refuses it.
import { conflict, invalid, notFound } from '../../shared/errors';
import type { ScopedSessionId } from '../../shared/ids';
import { formatTime, type Instant } from '../../shared/time';
import type { EventDraft } from '../../journal/record';
import { allowedOps, nextStatus, type SessionOp } from './machine';
import { SESSION_EVENTS as E, type PutData } from './events';
import type { SessionRecord, Sessions } from './state';

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

/** Refuses `op` on `record` unless the machine allows it; returns the status it leads to. */
export function requireMove(record: SessionRecord | undefined, op: SessionOp, shownId: string): void {
  if (record === undefined) throw notFound(`no session ${JSON.stringify(shownId)}`, 'see `crux session list`');
  if (nextStatus(record.status, op) !== undefined) return;
  const allowed = allowedOps(record.status);
  throw conflict(
    `cannot ${op} session ${JSON.stringify(shownId)}: it is ${record.status}`,
    allowed.length > 0 ? `a ${record.status} session allows: ${allowed.join(', ')}` : `${record.status} is final`,
  );
}

export function decidePut(sessions: Sessions, cmd: PutCommand, now: Instant, shownId: string): EventDraft[] {
  const current = sessions.get(cmd.key);
  if (current !== undefined) requireMove(current, 'put', shownId);
  let total = cmd.tokens ?? current?.total_tokens ?? 0;
  if (cmd.addTokens !== undefined) total += cmd.addTokens;
  if (!Number.isSafeInteger(total)) throw invalid(`total_tokens would overflow: ${total}`);
  if (cmd.maxTokens !== undefined && total > cmd.maxTokens) {
    throw invalid(`total_tokens would be ${total}, over the budget of ${cmd.maxTokens}`, 'raise --max-tokens / CRUX_SESSION_TOKEN_BUDGET, or close the session');
  }
  let expiresAt = current?.expires_at ?? null;
  if (cmd.ttlMs !== undefined) expiresAt = formatTime(now + cmd.ttlMs);
  if (cmd.expiresAt !== undefined) expiresAt = formatTime(cmd.expiresAt);
  const data: PutData = { id: cmd.key, state: cmd.state, total_tokens: total, expires_at: expiresAt };
  return [{ ev: E.put, data, actor: cmd.actor }];
}
