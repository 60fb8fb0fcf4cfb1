// `crux doctor` verifies every journal as `journal check` does and reports counts, not states: its memory must not
// hold the store. It held every session's state, every case's body and term postings, and every record of an import
// batch until the batch was whole (2.2 GB at 1M sessions and 1M cases, where check stays under 170 MiB). Here a
// store of 30k sessions and 30k cases, doctor under a V8 heap bound that the old doctor exceeded (it needed about
// 56 MiB there; the new one runs in under 24) and that journal check keeps with room to spare.
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, freshDataDir, testEnv } from '../helpers/cli';

const N = 30_000;
/** The V8 old-space bound doctor must run in, in MiB. */
const HEAP_MIB = 40;
const NOW = '2026-12-01T12:00:00Z';

/** Sessions as `session import` lines: 70% closed, the rest open, some stranded (updated days ago), some expiring. */
function sessionLines(): string {
  const lines: string[] = [];
  for (let i = 0; i < N; i++) {
    const line: Record<string, unknown> = { session_id: `s${i}`, state: { step: i, notes: 'n'.repeat(200), plan: ['a', 'b', 'c'] } };
    const r = (i * 2654435761) % 100;
    if (i % 1000 === 0) line.updated_at = '2026-11-28T12:00:00Z';
    else if (r < 70) Object.assign(line, { status: 'closed', updated_at: '2026-11-01T12:00:00Z' });
    else Object.assign(line, { updated_at: '2026-12-01T11:00:00Z', expires_at: '2026-12-01T14:00:00Z' });
    lines.push(JSON.stringify(line));
  }
  return `${lines.join('\n')}\n`;
}

/** Cases as `case import` lines: tasks of a few words of a small vocabulary, tags, 80% successes. */
function caseLines(): string {
  const words = Array.from({ length: 500 }, (_, i) => `w${i.toString(36)}`);
  const lines: string[] = [];
  for (let i = 0; i < N; i++) {
    const task = Array.from({ length: 4 + (i % 6) }, (_, k) => words[(i * 31 + k * 97) % words.length]).join(' ');
    const tags = [words[i % 7]!, words[(i % 11) + 20]!];
    lines.push(JSON.stringify({ task: `update the ${task}`, action: `ran ${words[i % 13]}`, outcome: 'worked', success: i % 5 !== 0, reward: 0.5, tags }));
  }
  return `${lines.join('\n')}\n`;
}

const env = testEnv({ CRUX_NOW: NOW });

describe('crux doctor in bounded memory', () => {
  it(`verifies and counts ${N} sessions and ${N} cases within a ${HEAP_MIB} MiB heap, as journal check does`, { timeout: 180_000 }, async () => {
    const dir = freshDataDir();
    for (const [what, input] of [
      ['session', sessionLines()],
      ['case', caseLines()],
    ] as const) {
      const built = await execa(CRUX, ['--data-dir', dir, what, 'import', '-'], { input, env, extendEnv: false, reject: false });
      expect(built.exitCode, String(built.stderr)).toBe(0);
    }
    const bounded = (args: string[]) =>
      execa(process.execPath, [`--max-old-space-size=${HEAP_MIB}`, CRUX_SCRIPT, '--data-dir', dir, ...args], { env, extendEnv: false, reject: false });
    const check = await bounded(['journal', 'check', '--json']);
    expect(check.exitCode, String(check.stderr).slice(0, 300)).toBe(0);

    const run = await bounded(['doctor', '--json']);
    // The old doctor died here: "JavaScript heap out of memory" (SIGABRT).
    expect(run.exitCode, String(run.stderr).slice(0, 300)).toBe(0);
    const report = JSON.parse(String(run.stdout));
    expect(report.healthy).toBe(true);
    expect(report.journals.find((j: { name: string }) => j.name === 'sessions')).toMatchObject({ records: N, healthy: true });
    expect(report.journals.find((j: { name: string }) => j.name === 'cases')).toMatchObject({ records: N, healthy: true });
    expect(report.sessions.total).toBe(N);
    expect(report.sessions.stranded_count).toBe(N / 1000);
    expect(report.sessions.by_status.closed).toBeGreaterThan(N / 2);
  });
});
