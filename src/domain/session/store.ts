// The session store: commands in, results out; replay and decisions over the journal layer.
import type { DataDir } from '../../journal/data-dir';
import { notFound } from '../../shared/errors';
import { scopeSessionId, type AgentName, type LogicalSessionId, type ScopedSessionId } from '../../shared/ids';
import { formatTime, type Instant } from '../../shared/time';
import { decidePut, type PutCommand } from './decide';
import type { FreshnessThresholds } from './freshness';
import { SESSION_STORE, type SessionRecord } from './state';
import { viewSession, type SessionView } from './view';

export interface SessionScope {
  readonly dir: DataDir;
  readonly agent: AgentName | undefined;
  readonly now: Instant;
  readonly thresholds?: FreshnessThresholds;
}

export const keyFor = (scope: SessionScope, id: LogicalSessionId): ScopedSessionId => scopeSessionId(scope.agent, id);

export async function putSession(scope: SessionScope, id: LogicalSessionId, cmd: Omit<PutCommand, 'key'>): Promise<SessionView> {
  const key = keyFor(scope, id);
  return scope.dir.write((tx) => {
    const sessions = tx.load(SESSION_STORE);
    tx.append(SESSION_STORE, decidePut(sessions, { ...cmd, key }, scope.now, id));
    return viewSession(sessions.get(key)!, scope.now, scope.thresholds);
  }, formatTime(scope.now));
}

/** The stored record of `id` in the caller's scope (exit 3 when there is none). */
export function findSession(scope: SessionScope, id: LogicalSessionId): SessionRecord {
  const record = scope.dir.read(SESSION_STORE).get(keyFor(scope, id));
  if (record === undefined) throw notFound(`no session ${JSON.stringify(id)}${scope.agent ? ` for agent ${JSON.stringify(scope.agent)}` : ''}`, 'see `crux session list`');
  return record;
}

export function getSession(scope: SessionScope, id: LogicalSessionId): { session: SessionView; state: string } {
  const record = findSession(scope, id);
  return { session: viewSession(record, scope.now, scope.thresholds), state: record.state };
}
