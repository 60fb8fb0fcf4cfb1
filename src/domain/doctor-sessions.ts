// `crux doctor`, the sessions judged: stranded ones, expired ones nobody reaps, scoped and unscoped.
import { tryParseTime } from '../shared/time';
import { unscopeSessionId } from '../shared/ids';
import { DEFAULT_THRESHOLDS, judgeFreshness } from './session/freshness';
import { strandedBy } from './session/query';
import type { SessionBriefRecord } from './doctor-folds';

import { LIST_LIMIT, REAP_GRACE_MS, type DoctorInput, type DoctorReport, type Finding, type SessionBrief } from './doctor-report';

/** `sessions`: each session as doctor folds it (doctor-folds.ts), or as the store does (a SessionRecord has those fields). */
export function judgeSessions(
  sessions: ReadonlyMap<string, SessionBriefRecord> | undefined,
  input: DoctorInput,
  findings: Finding[],
): DoctorReport['sessions'] {
  const byStatus: Record<string, number> = {};
  const stranded: SessionBrief[] = [];
  const overdue: SessionBrief[] = [];
  let inScope = 0;
  let unscoped = 0;
  let otherAgents = 0;
  for (const record of sessions?.values() ?? []) {
    const { status } = record;
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    const { agent, id } = unscopeSessionId(record.key);
    if (agent === undefined) unscoped += 1;
    else if (agent === input.agent) inScope += 1;
    else otherAgents += 1;
    if (status === 'closed') continue;
    // As the session's view (view.ts) shows it: an open session's freshness is judged from its last write.
    const freshness = judgeFreshness(record.updated_at, input.now, input.thresholds);
    const brief: SessionBrief = {
      session_id: id,
      agent: agent ?? null,
      status,
      updated_at: record.updated_at,
      expires_at: record.expires_at,
      freshness,
    };
    if (strandedBy(status, freshness)) stranded.push(brief);
    const expires = tryParseTime(record.expires_at);
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
