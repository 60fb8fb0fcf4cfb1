// Exactly once under concurrency, with real processes: closes and reapers racing on one store (a data directory,
// and a PostgreSQL store shared as by agents on several hosts).
import { describe, expect, it } from 'vitest';
import { crux, describeEachStore, freshStore, journalRecords } from '../helpers/cli';

const records = (store: string) => journalRecords(store, 'sessions.jsonl');

describeEachStore('on a %s store', (kind) => {
  const freshDataDir = () => freshStore(kind);

  describe('close exactly once', () => {
    it('4 sequential + 8 simultaneous closes write exactly one close record; the rest report already_closed', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'race', '{"n":1}']);
      const sequential = [];
      for (let i = 0; i < 4; i += 1) sequential.push(await crux(dir, ['--json', 'session', 'close', 'race', '--summary', `seq ${i}`]));
      const concurrent = await Promise.all(
        Array.from({ length: 8 }, (_, i) => crux(dir, ['--json', 'session', 'close', 'race', '--outcome', 'failed', '--summary', `par ${i}`])),
      );
      const all = [...sequential, ...concurrent];
      for (const run of all) expect(run.exitCode, run.stderr).toBe(0);
      const outcomes = all.map((r) => JSON.parse(r.stdout).outcome);
      expect(outcomes.filter((o) => o === 'closed')).toHaveLength(1);
      expect(outcomes[0]).toBe('closed');
      expect(outcomes.filter((o) => o === 'already_closed')).toHaveLength(11);
      // Every report carries the one original close record.
      for (const run of all) expect(JSON.parse(run.stdout).session).toMatchObject({ status: 'closed', outcome: 'completed', summary: 'seq 0' });
      expect(records(dir).filter((r) => r.ev === 'session.closed')).toHaveLength(1);
      expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    });

    it('8 simultaneous first closes: one closes, seven report already_closed, one record', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'race', '{}']);
      const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => crux(dir, ['--json', 'session', 'close', 'race', '--summary', `p${i}`])));
      for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
      const closed = runs.filter((r) => JSON.parse(r.stdout).outcome === 'closed');
      expect(closed).toHaveLength(1);
      const winner = JSON.parse(closed[0]!.stdout).session.summary;
      for (const run of runs) expect(JSON.parse(run.stdout).session.summary).toBe(winner);
      expect(records(dir).filter((r) => r.ev === 'session.closed')).toHaveLength(1);
    });
  });

  describe('reap exactly once', () => {
    it('6 simultaneous reapers reap each of 40 expired sessions once between them', async () => {
      const dir = freshDataDir();
      const lines = Array.from({ length: 40 }, (_, i) =>
        JSON.stringify({ session_id: `s${i}`, state: { i }, expires_at: '2026-01-01T00:00:00Z', ...(i % 4 === 0 ? { agent: `agent${i % 3}` } : {}) }),
      );
      lines.push(JSON.stringify({ session_id: 'keep', state: {}, expires_at: '2027-01-01T00:00:00Z' }));
      expect((await crux(dir, ['session', 'import'], { input: `${lines.join('\n')}\n` })).exitCode).toBe(0);
      const now = ['--now', '2026-06-01T00:00:00Z'];
      const runs = await Promise.all(Array.from({ length: 6 }, () => crux(dir, ['--json', ...now, 'session', 'reap'])));
      for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
      const results = runs.map((r) => JSON.parse(r.stdout));
      const reaped = results.flatMap((r) => r.sessions.map((s: any) => `${s.agent}/${s.session_id}`));
      expect(results.reduce((n, r) => n + r.count, 0)).toBe(40);
      expect(new Set(reaped).size).toBe(40);
      expect(reaped).not.toContain('null/keep');
      const closes = records(dir).filter((r) => r.ev === 'session.closed');
      expect(closes).toHaveLength(40);
      expect(closes.every((r) => r.data.outcome === 'expired')).toBe(true);
      // All reaped in one append: one reaper took them all, the others found nothing.
      expect(results.map((r) => r.count).sort((a, b) => b - a)).toEqual([40, 0, 0, 0, 0, 0]);
    });
  });
});
