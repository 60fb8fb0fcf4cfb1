// A store populated as the dashboard tests need it, through the CLI: scoped and unscoped sessions with several
// versions, a closed one, hostile text (markup, `</script>`, control characters), cases and handoffs.
import { expect } from 'vitest';
import { crux } from './run-cli';

/** The time every command of these tests runs at (freshness and expiry then agree between the CLI and the UI). */
export const UI_NOW = '2026-11-30T12:00:00.000Z';
export const HOSTILE_TASK = '<img src=x onerror=alert(1)>';
export const HOSTILE_STATE = '{"note":"</script><script>alert(2)</script>","rtl":"\u202eevil","c1":"\u0085","step":1}';

async function ok(store: string, args: string[], at = UI_NOW): Promise<string> {
  const r = await crux(store, ['--now', at, ...args]);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

export async function populate(store: string): Promise<void> {
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-1', '{"step":1,"todo":["a","b"]}'], '2026-11-30T09:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-1', '{"step":2,"todo":["b","c"]}', '--add-tokens', '40'], '2026-11-30T10:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-2', HOSTILE_STATE], '2026-11-30T11:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'close', 'plan-2', '--outcome', 'completed', '--summary', 'done: <b>bold</b>']);
  await ok(store, ['--agent', 'builder', 'session', 'put', 'build-1', '{"compiling":true}'], '2026-11-28T12:00:00.000Z');
  await ok(store, ['session', 'put', 'loose', '{"a":1}']);
  await ok(store, ['--agent', 'planner', 'handoff', 'mint', 'plan-1', '--to', 'builder', '--message', 'over to you']);
  await ok(store, ['case', 'record', '--task', HOSTILE_TASK, '--action', 'render it', '--outcome', 'shown as text', '--tag', 'web']);
  await ok(store, ['case', 'record', '--task', 'renew the tls certificate', '--action', 'certbot renew', '--outcome', 'renewed', '--tag', 'tls']);
  await ok(store, [
    'case',
    'record',
    '--task',
    'renew the tls certificate by hand',
    '--action',
    'openssl',
    '--outcome',
    'expired key',
    '--failure',
    '--tag',
    'tls',
  ]);
}

/** A session id of 185 characters (a generated id as some clients make them), for the layout tests. */
export const LONG_ID = `claude-code-${'0123456789abcdef'.repeat(10)}-a-very-long-generated-session-identifier-x`.slice(0, 185);

/** What the attention store holds: the counts the overview must show, and the total. */
export const ATTENTION = {
  total: 2000,
  /** Stale, neither closed nor archived: active and handed off (the long id among them). */
  stranded: 387,
  /** Stale too, but archived: never stranded. */
  archivedStale: 200,
  /** Closed failed (40) or abandoned (12) within the last 7 days; 30 more failed before that. */
  failedRecently: 52,
  failedLongAgo: 30,
  expiredUnreaped: 25,
  expiringSoon: 15,
  /** Closed through the CLI as failed within the week (the chart's failures), counted in failedRecently. */
  chartFailures: 3,
  cases: 2000,
} as const;

const AGENTS = ['claude-code', 'gemini-cli', 'codex', 'planner', 'builder'];
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A store of 2,000 sessions and 2,000 cases that needs attention (ATTENTION says how much), imported in two
 * invocations plus a few closes through the CLI (the activity chart's failures), all judged at UI_NOW.
 */
export async function populateAttention(store: string, dir: string): Promise<void> {
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const now = Date.parse(UI_NOW);
  const H = 3_600_000;
  const lines: Record<string, unknown>[] = [];
  const add = (id: string, i: number, extra: Record<string, unknown>) =>
    lines.push({ session_id: id, agent: AGENTS[i % AGENTS.length], state: { i }, total_tokens: (i * 37) % 5000, ...extra });
  let n = 0;
  add(LONG_ID, n++, { status: 'active', updated_at: iso(now - 72 * H) });
  for (let i = 1; i < ATTENTION.stranded; i++)
    add(`stranded-${i}`, n++, { status: i % 4 === 0 ? 'handed_off' : 'active', updated_at: iso(now - (25 + i) * H) });
  for (let i = 0; i < ATTENTION.archivedStale; i++)
    add(`parked-${i}`, n++, { status: 'archived', updated_at: iso(now - (30 + i) * H), archive_reason: 'parked' });
  const closed = (id: string, outcome: string, closedAgo: number) =>
    add(id, n++, { status: 'closed', outcome, updated_at: iso(now - closedAgo - H), closed_at: iso(now - closedAgo), summary: `${outcome}: see the log` });
  for (let i = 0; i < 900; i++) closed(`done-${i}`, 'completed', (i % 160) * H);
  for (let i = 0; i < 40 - ATTENTION.chartFailures; i++) closed(`failed-${i}`, 'failed', (i % 150) * H + H);
  for (let i = 0; i < 12; i++) closed(`abandoned-${i}`, 'abandoned', i * 10 * H + H);
  for (let i = 0; i < ATTENTION.failedLongAgo; i++) closed(`failed-old-${i}`, 'failed', (8 * 24 + i) * H);
  for (let i = 0; i < 50; i++) closed(`reaped-${i}`, 'expired', i * 3 * H);
  for (let i = 0; i < ATTENTION.expiredUnreaped; i++)
    add(`overdue-${i}`, n++, { status: 'active', updated_at: iso(now - 2 * H), expires_at: iso(now - (i + 1) * 600_000) });
  for (let i = 0; i < ATTENTION.expiringSoon; i++)
    add(`expiring-${i}`, n++, { status: 'active', updated_at: iso(now - 60_000), expires_at: iso(now + (i + 1) * 180_000) });
  const rest = ATTENTION.total - lines.length - ATTENTION.chartFailures - 1;
  for (let i = 0; i < rest; i++) add(`fresh-${i}`, n++, { status: 'active', updated_at: iso(now - (i % 20) * 60_000) });
  const sessionsFile = join(dir, 'sessions.jsonl');
  writeFileSync(sessionsFile, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  await ok(store, ['session', 'import', sessionsFile]);
  // The chart's failures: sessions put and closed as failed through the CLI, on three days of the week.
  for (let i = 0; i < ATTENTION.chartFailures; i++) {
    const at = iso(now - (i * 30 + 5) * H);
    await ok(store, ['--agent', 'codex', 'session', 'put', `chart-failed-${i}`, '{}'], at);
    await ok(store, ['--agent', 'codex', 'session', 'close', `chart-failed-${i}`, '--outcome', 'failed', '--summary', 'tests failed'], at);
  }
  await ok(store, ['--agent', 'planner', 'session', 'put', 'chart-done', '{}'], iso(now - 2 * H));
  const tags = ['deploy', 'tls', 'db', 'ci', 'incident'];
  const cases = Array.from({ length: ATTENTION.cases }, (_, i) => ({
    case_id: `c_attention_${String(i).padStart(5, '0')}`,
    task: i === 0 ? `rotate the database credentials of every service in the ${'eu-west '.repeat(20)}region` : `task ${i}: ${tags[i % tags.length]} work`,
    context: i === 0 ? 'the vault was sealed; two services kept the old password for an hour' : null,
    action: `step ${i}`,
    outcome: i === 0 ? 'rotated; two services restarted by hand' : i % 7 === 0 ? 'failed: timeout' : 'done',
    success: i % 7 !== 0,
    tags: [tags[i % tags.length]],
    created_at: iso(now - i * 60_000),
  }));
  const casesFile = join(dir, 'cases.jsonl');
  writeFileSync(casesFile, cases.map((c) => `${JSON.stringify(c)}\n`).join(''));
  await ok(store, ['case', 'import', casesFile]);
}
