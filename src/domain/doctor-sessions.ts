// `crux doctor`, the sessions judged: stranded ones, expired ones nobody reaps, scoped and unscoped.
import { tryParseTime } from '../shared/time';
import type { ScopedSessionId } from '../shared/ids';
import { unscopeSessionId } from '../shared/ids';
import { DEFAULT_THRESHOLDS } from './session/freshness';
import type { Sessions } from './session/fold';
import { viewSession } from './session/view';
import { isStranded } from './session/query';

import { LIST_LIMIT, REAP_GRACE_MS, type DoctorInput, type DoctorReport, type Finding, type SessionBrief } from './doctor-report';

export function judgeSessions(sessions: Sessions | undefined, input: DoctorInput, findings: Finding[]): DoctorReport['sessions'] {
  const byStatus: Record<string, number> = {};
  const stranded: SessionBrief[] = [];
  const overdue: SessionBrief[] = [];
  let inScope = 0;
  let unscoped = 0;
  let otherAgents = 0;
  for (const record of sessions?.values() ?? []) {
    const view = viewSession(record, input.now, input.thresholds);
    byStatus[view.status] = (byStatus[view.status] ?? 0) + 1;
    const { agent } = unscopeSessionId(record.key as ScopedSessionId);
    if (agent === undefined) unscoped += 1;
    else if (agent === input.agent) inScope += 1;
    else otherAgents += 1;
    if (view.status === 'closed') continue;
    const brief: SessionBrief = {
      session_id: view.session_id,
      agent: view.agent,
      status: view.status,
      updated_at: view.updated_at,
      expires_at: view.expires_at,
      freshness: view.freshness ?? 'unknown',
    };
    if (isStranded(record, input.now, input.thresholds)) stranded.push(brief);
    const expires = tryParseTime(view.expires_at);
    if (expires !== undefined && input.now - expires > REAP_GRACE_MS) overdue.push(brief);
  }
  const oldestFirst = (a: SessionBrief, b: SessionBrief) => (a.updated_at ?? '').localeCompare(b.updated_at ?? '');
  stranded.sort(oldestFirst);
  overdue.sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? ''));
  if (stranded.length > 0) {
    findings.push({
      level: 'warning',
      code: 'stranded_sessions',
      message: `${stranded.length} session(s) stranded: neither closed nor archived, and not written for over ${Math.round((input.thresholds ?? DEFAULT_THRESHOLDS).staleMs / 3_600_000)} h (\`crux session list --stranded --all-agents\`)`,
    });
  }
  if (overdue.length > 0) {
    findings.push({
      level: 'warning',
      code: 'reap_overdue',
      message: `${overdue.length} session(s) expired over ${REAP_GRACE_MS / 60_000} min ago and are still open, the oldest since ${overdue[0]!.expires_at}: is \`crux session reap\` running from cron?`,
    });
  }
  if (input.agent === undefined && otherAgents > 0) {
    findings.push({
      level: 'note',
      code: 'scoped_sessions',
      message: `no agent identity is set: ${otherAgents} session(s) stored under an agent's scope are invisible to plain \`session\` commands (set --agent or CRUX_AGENT)`,
    });
  }
  return {
    total: sessions?.size ?? 0,
    by_status: byStatus,
    in_scope: inScope,
    unscoped,
    other_agents: otherAgents,
    stranded_count: stranded.length,
    stranded: stranded.slice(0, LIST_LIMIT),
    overdue_reap_count: overdue.length,
    overdue_reap: overdue.slice(0, LIST_LIMIT),
  };
}
