// Derived rows of a PostgreSQL store are derived state (SPEC §3, §11): index rows deleted or edited never change
// an answer (reap, `list --stranded`, doctor agree with a replay), `journal check` reports them (9) and --repair
// rebuilds them; an edited history row is damage (9) with the same `history` member as a data directory.
import { describe, expect, it } from 'vitest';
import { crux } from '../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../helpers/pg';

const schemaOf = (store: string) => new URL(store).searchParams.get('schema')!;
const json = async (store: string, args: string[]) => {
  const run = await crux(store, ['--json', ...args]);
  return { ...run, doc: run.stdout ? JSON.parse(run.stdout) : undefined };
};

/** A store with a stranded session, an expired lease, fresh sessions, and the answers a replay gives. */
async function seeded(): Promise<{ store: string; answers: () => Promise<unknown> }> {
  const store = freshStoreUrl('derived');
  expect((await crux(store, ['session', 'put', 'old', '{}', '--now', '2026-01-01T00:00:00Z'])).exitCode).toBe(0);
  expect((await crux(store, ['session', 'put', 'lease', '{}', '--ttl', '1h', '--now', '2026-01-03T00:00:00Z'])).exitCode).toBe(0);
  for (const id of ['a', 'b', 'c'])
    expect((await crux(store, ['--agent', 'bot', 'session', 'put', id, '{}', '--now', '2026-01-03T01:00:00Z'])).exitCode).toBe(0);
  const now = ['--now', '2026-01-03T02:00:00Z'];
  const answers = async () => ({
    stranded: (await json(store, [...now, 'session', 'list', '--stranded'])).doc.sessions.map((s: any) => s.session_id),
    agent: (await json(store, [...now, '--agent', 'bot', 'session', 'list'])).doc.sessions.map((s: any) => s.session_id).sort(),
    doctor: (await json(store, [...now, 'doctor'])).doc.sessions.stranded_count,
  });
  return { store, answers };
}

describe.skipIf(pgSkipReason() !== undefined)('derived rows of a PostgreSQL store', () => {
  for (const [what, damage] of [
    ['every index row deleted', (s: string) => `delete from ${s}.journal_sessions_index`],
    [
      'one wrong num_value',
      (s: string) =>
        `update ${s}.journal_sessions_index set num_value = num_value + 10000000000000 where key = 'old' and num_value is not null and name = (select min(name) from ${s}.journal_sessions_index where key = 'old' and num_value is not null)`,
    ],
    [
      'one wrong text_value',
      (s: string) =>
        `update ${s}.journal_sessions_index set text_value = 'nobody' where text_value = 'bot' and key = (select min(key) from ${s}.journal_sessions_index where text_value = 'bot')`,
    ],
  ] as const) {
    it(`${what}: the same answers, check 9 naming the index, --repair rebuilds it, reap still reaps`, async () => {
      const { store, answers } = await seeded();
      const before = await answers();
      expect(before).toMatchObject({ stranded: ['old'], agent: ['a', 'b', 'c'], doctor: 1 });
      expect(psql(`${damage(schemaOf(store))} returning 1`).trim()).not.toBe('');
      expect(await answers()).toEqual(before);
      const check = await json(store, ['journal', 'check']);
      expect(check.exitCode).toBe(9);
      const sessions = check.doc.journals.find((j: any) => j.name === 'sessions');
      expect(sessions.derived.problems[0]).toMatch(/journal_sessions_index disagrees with a replay/);
      const repaired = await json(store, ['journal', 'check', '--repair']);
      expect(repaired.exitCode, repaired.stderr).toBe(0);
      expect(repaired.doc.journals.find((j: any) => j.name === 'sessions').derived).toMatchObject({ rebuilt: true });
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
      expect(await answers()).toEqual(before);
      // Damaged again: reap (a write through the index) still reaps the expired lease, and rebuilds the rows.
      psql(damage(schemaOf(store)));
      const reap = await json(store, ['--now', '2026-01-03T02:00:00Z', 'session', 'reap']);
      expect(reap.exitCode, reap.stderr).toBe(0);
      expect(JSON.stringify(reap.doc)).toContain('lease');
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    });
  }

  it('an edited history row is 9 with the `history` member a data directory has; --repair quarantines it', async () => {
    const store = freshStoreUrl('hist');
    for (const v of [1, 2, 3]) expect((await crux(store, ['session', 'put', 'a', `{"v":${v}}`])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'compact'])).exitCode).toBe(0);
    const healthy = await json(store, ['journal', 'check']);
    expect(healthy.exitCode).toBe(0);
    expect(healthy.doc.journals.find((j: any) => j.name === 'sessions').history).toMatchObject({ files: 1, records: 3, problems: [] });
    psql(`update ${schemaOf(store)}.history set body = replace(body, '{\\"v\\":2}', '{\\"v\\":9}') where journal = 'sessions.jsonl' and line = 2`);
    const check = await json(store, ['journal', 'check']);
    expect(check.exitCode).toBe(9);
    const history = check.doc.journals.find((j: any) => j.name === 'sessions').history;
    expect(history.problems).toEqual([{ file: 'history/sessions.jsonl#1', line: 2, reason: expect.stringMatching(/hash/) }]);
    const repaired = await json(store, ['journal', 'check', '--repair']);
    expect(repaired.exitCode).toBe(0);
    expect(repaired.doc.journals.find((j: any) => j.name === 'sessions').history.quarantined).toHaveLength(1);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(store, ['session', 'get', 'a'])).stdout).toBe('{"v":3}');
  });
});
