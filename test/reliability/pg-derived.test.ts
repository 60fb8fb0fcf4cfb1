// Derived rows of a PostgreSQL store are derived state (SPEC §3, §11): index rows and term rows deleted or edited
// never change an answer (reap, `list --stranded`, doctor, retrieve agree with a replay), `journal check` reports
// them (9) and --repair rebuilds them; the triggers that withdraw trust from rows written by anyone but crux hold
// when they are dropped or disabled, or silenced by replication mode; an edited history row is damage (9) with
// the same `history` member as a data directory.
import { describe, expect, it } from 'vitest';
import { stressIt } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { freshStoreUrl, pgSkipReason } from '../helpers/pg';
import { sqlText as psql } from '../helpers/pg-sql';

const schemaOf = (store: string) => new URL(store).searchParams.get('schema')!;
const json = async (store: string, args: string[]) => {
  const run = await crux(store, ['--json', ...args]);
  return { ...run, doc: run.stdout ? JSON.parse(run.stdout) : undefined };
};

interface Seeded {
  readonly store: string;
  /** What the store's reads answer now. */
  readonly answers: () => Promise<unknown>;
  /** What they answered on the seed, whose rows the store's are (a copy, its derived rows built and trusted). */
  readonly before: unknown;
}

/**
 * A fresh store holding the rows `seed` wrote, and what the seed's reads answered: the seed written and read once
 * a file, then a `journal copy` a test (one command, not five writes and a round of reads).
 */
function copiesOf(prefix: string, seed: (store: string) => Promise<void>, answersOf: (store: string) => () => Promise<unknown>): () => Promise<Seeded> {
  let once: Promise<{ store: string; before: unknown }> | undefined;
  return async () => {
    once ??= (async () => {
      const store = freshStoreUrl(prefix);
      await seed(store);
      return { store, before: await answersOf(store)() };
    })();
    const { store: original, before } = await once;
    const store = freshStoreUrl(prefix);
    const copy = await crux(original, ['journal', 'copy', '--to', store]);
    expect(copy.exitCode, copy.stderr).toBe(0);
    return { store, answers: answersOf(store), before };
  };
}

/** A store with a stranded session, an expired lease, fresh sessions, and the answers a replay gives. */
const seeded = copiesOf(
  'derived',
  async (store) => {
    expect((await crux(store, ['session', 'put', 'old', '{}', '--now', '2026-01-01T00:00:00Z'])).exitCode).toBe(0);
    expect((await crux(store, ['session', 'put', 'lease', '{}', '--ttl', '1h', '--now', '2026-01-03T00:00:00Z'])).exitCode).toBe(0);
    for (const id of ['a', 'b', 'c'])
      expect((await crux(store, ['--agent', 'bot', 'session', 'put', id, '{}', '--now', '2026-01-03T01:00:00Z'])).exitCode).toBe(0);
  },
  (store) => sessionAnswers(store),
);

function sessionAnswers(store: string): () => Promise<unknown> {
  const now = ['--now', '2026-01-03T02:00:00Z'];
  return async () => ({
    stranded: (await json(store, [...now, 'session', 'list', '--stranded'])).doc.sessions.map((s: any) => s.session_id),
    agent: (await json(store, [...now, '--agent', 'bot', 'session', 'list'])).doc.sessions.map((s: any) => s.session_id).sort(),
    doctor: (await json(store, [...now, 'doctor'])).doc.sessions.stranded_count,
    // Limited lists read newest first through the index (JournalStore.readNewest), with the count of the rest.
    newest: (await crux(store, [...now, 'session', 'list', '--limit', '2', '--all-agents'])).stdout,
    newestJson: (await json(store, [...now, 'session', 'list', '--limit', '2'])).doc,
    strandedNewest: (await crux(store, [...now, 'session', 'list', '--stranded', '--limit', '1'])).stdout,
  });
}

/** A store with cases sharing some terms, and what retrieve answers for a few queries (ids and similarities). */
const seededCases = copiesOf(
  'terms',
  async (store) => {
    const cases = [
      ['deploy the api to staging', '--reward', '0.9'],
      ['deploy the web frontend', '--reward', '0.9'],
      ['fix the api timeout', '--failure'],
      ['rotate the api keys', '--tag', 'deploy'],
      ['write the release notes', '--reward', '0.2'],
    ];
    for (const [task, ...rest] of cases)
      expect((await crux(store, ['case', 'record', '--task', task!, '--action', 'a', '--outcome', 'o', ...rest])).exitCode).toBe(0);
  },
  (store) => caseAnswers(store),
);

function caseAnswers(store: string): () => Promise<unknown> {
  const retrieve = async (...args: string[]) =>
    (await json(store, ['case', 'retrieve', ...args])).doc.results.map((r: any) => [r.case.task, r.similarity, r.case.times_reused]);
  return async () => ({
    api: await retrieve('deploy', 'api'),
    success: await retrieve('the', 'api', '--only-success'),
    one: await retrieve('release', '--top-k', '1'),
    // More words than one integer's bits: which of them a row holds comes back as a list.
    long: await retrieve('api', 'notes', ...Array.from({ length: 40 }, (_, i) => `word${i}`)),
    // Limited lists newest first read the cases they show, chosen by the bank's columns and tag postings.
    lists: await Promise.all(
      [['--only-failure'], ['--only-success'], ['--tag', 'deploy'], []].map(async (filter) => {
        const limited = (await json(store, ['case', 'list', ...filter, '--limit', '2'])).doc.cases.map((c: any) => c.task);
        const whole = (await json(store, ['case', 'list', ...filter])).doc.cases.map((c: any) => c.task);
        expect(limited).toEqual(whole.slice(0, 2));
        return limited;
      }),
    ),
  });
}

/** Whether retrieve went through the term rows: their binding is trusted and follows the journal. */
const termsTrusted = async (store: string) => (await psql(`select trusted from ${schemaOf(store)}.term_indexes where journal = 'cases.jsonl'`)).trim() === 't';

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
    // One damage of this kind in every run, the others in npm run test:stress.
    const test = what === 'every index row deleted' ? it : stressIt;
    test(`${what}: the same answers, check 9 naming the index, --repair rebuilds it, reap still reaps`, async () => {
      const { store, answers, before } = await seeded();
      expect(before).toMatchObject({ stranded: ['old'], agent: ['a', 'b', 'c'], doctor: 1 });
      expect((await psql(`${damage(schemaOf(store))} returning 1`)).trim()).not.toBe('');
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
      await psql(damage(schemaOf(store)));
      const reap = await json(store, ['--now', '2026-01-03T02:00:00Z', 'session', 'reap']);
      expect(reap.exitCode, reap.stderr).toBe(0);
      expect(JSON.stringify(reap.doc)).toContain('lease');
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    });
  }

  for (const [what, damage] of [
    ['a term row deleted', (s: string) => `delete from ${s}.journal_cases_terms where 'staging' = any(terms)`],
    [
      "a term row's facts edited",
      (s: string) => `update ${s}.journal_cases_terms set facts = regexp_replace(facts, '^[^ ]+', '0') where 'staging' = any(terms)`,
    ],
    ["a term row's terms edited", (s: string) => `update ${s}.journal_cases_terms set terms = array['release'] where 'timeout' = any(terms)`],
    [
      'a term row added',
      (s: string) => `insert into ${s}.journal_cases_terms (key, terms, facts) values ('c_forged', array['deploy', 'api'], '1 0 1 0 2 1 10')`,
    ],
    ['the term rows truncated', (s: string) => `truncate ${s}.journal_cases_terms`],
  ] as const) {
    // One damage of this kind in every run, the others in npm run test:stress.
    const test = what === "a term row's facts edited" ? it : stressIt;
    test(`${what}: the same retrieve answers, check 9 naming the term rows, --repair rebuilds them`, async () => {
      const { store, answers, before } = await seededCases();
      expect((before as any).api).toEqual([
        ['rotate the api keys', 2 / 5, 0],
        ['deploy the api to staging', 2 / 5, 0],
        ['fix the api timeout', 1 / 5, 0],
        ['deploy the web frontend', 1 / 5, 0],
      ]);
      expect((before as any).long).toHaveLength(4);
      expect(await termsTrusted(store)).toBe(true);
      await psql(damage(schemaOf(store)));
      // The write was not crux's: the rows lost their trust in the same transaction, and retrieve does without them.
      expect(await termsTrusted(store)).toBe(false);
      expect(await answers()).toEqual(before);
      const check = await json(store, ['journal', 'check']);
      expect(check.exitCode).toBe(9);
      expect(check.doc.journals.find((j: any) => j.name === 'cases').derived.problems[0]).toMatch(/journal_cases_terms disagrees with a replay/);
      const repaired = await json(store, ['journal', 'check', '--repair']);
      expect(repaired.exitCode, repaired.stderr).toBe(0);
      expect(repaired.doc.journals.find((j: any) => j.name === 'cases').derived).toMatchObject({ rebuilt: true });
      expect(await termsTrusted(store)).toBe(true);
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
      expect(await answers()).toEqual(before);
      // Damaged again, then a write (a reuse counted): it rebuilds the rows in its own transaction.
      await psql(damage(schemaOf(store)));
      const reused = await json(store, ['case', 'retrieve', 'release', '--mark-reused']);
      expect(reused.exitCode, reused.stderr).toBe(0);
      expect(await termsTrusted(store)).toBe(true);
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
      expect(((await answers()) as any).one).toEqual([['write the release notes', 1 / 4, 1]]);
    });
  }

  it('retrieve --mark-reused ranks its candidates from the term rows under the lock and keeps them trusted', async () => {
    const { store, answers, before: seen } = await seededCases();
    const before = seen as any;
    const marked = await json(store, ['case', 'retrieve', 'deploy', 'api', '--mark-reused']);
    expect(marked.exitCode, marked.stderr).toBe(0);
    // The count each result carries is the one just journaled, as on a data directory.
    expect(marked.doc.results.map((r: any) => [r.case.task, r.similarity, r.case.times_reused])).toEqual(before.api.map((r: any) => [r[0], r[1], 1]));
    expect(await termsTrusted(store)).toBe(true);
    expect(((await answers()) as any).api).toEqual(before.api.map((r: any) => [r[0], r[1], 1]));
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  it("retrieve reads the term rows: a write that forges crux's own (the documented limit) is believed, and check still finds it", async () => {
    const { store, answers, before: seen } = await seededCases();
    const before = seen as any;
    await psql(`begin; select set_config('crux.writer', 'on', true); delete from ${schemaOf(store)}.journal_cases_terms where 'staging' = any(terms); commit;`);
    expect(await termsTrusted(store)).toBe(true);
    expect(((await answers()) as any).api).toEqual(before.api.filter((r: any) => r[0] !== 'deploy the api to staging'));
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(9);
    expect((await crux(store, ['journal', 'check', '--repair'])).exitCode).toBe(0);
    expect(await answers()).toEqual(before);
  });

  for (const [what, bypass] of [
    ['trigger dropped', (s: string) => `drop trigger crux_derived_rows on ${s}.journal_sessions_index`],
    ['trigger disabled', (s: string) => `alter table ${s}.journal_sessions_index disable trigger crux_derived_rows`],
    [
      'trigger function replaced',
      (s: string) => `create or replace function ${s}.crux_derived_changed() returns trigger language plpgsql as $$ begin return null; end $$`,
    ],
  ] as const) {
    // One damage of this kind in every run, the others in npm run test:stress.
    const test = what === 'trigger disabled' ? it : stressIt;
    test(`the index's ${what}, then a row deleted: the same answers, and the next write guards the table again`, async () => {
      const { store, answers, before } = await seeded();
      const s = schemaOf(store);
      await psql(bypass(s));
      await psql(`delete from ${s}.journal_sessions_index where key = 'old'`);
      // The binding may still say trusted (nothing cleared it): the catalog shows the guard gone, so it is not believed.
      expect(await answers()).toEqual(before);
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(9);
      expect((await crux(store, ['--now', '2026-01-03T02:00:00Z', 'session', 'put', 'd', '{}'])).exitCode).toBe(0);
      expect((await psql(`select count(*) from pg_trigger where tgrelid = '${s}.journal_sessions_index'::regclass and tgenabled = 'A'`)).trim()).toBe('2');
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
      // The answers through the rebuilt rows are a replay's (the write added a session: `before` is out of date).
      const indexed = await answers();
      await psql(`update ${s}.secondary_indexes set trusted = false`);
      expect(await answers()).toEqual(indexed);
    });
  }

  it('rows of an older declaration of the keys (before an upgrade) are stale, not damage: check 0, the same answers, the next write rebuilds them', async () => {
    const { store, answers, before } = await seeded();
    const s = schemaOf(store);
    // As an older crux left them: another version and names, rows without the newer names.
    await psql(
      `update ${s}.secondary_indexes set version = 1, names = 'agent' where journal = 'sessions.jsonl'; delete from ${s}.journal_sessions_index where name <> 'agent'`,
    );
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    expect(await answers()).toEqual(before);
    expect((await crux(store, ['session', 'put', 'later', '{}'])).exitCode).toBe(0);
    expect((await psql(`select names <> 'agent' from ${s}.secondary_indexes where journal = 'sessions.jsonl'`)).trim()).toBe('t');
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    // A row edited at the current version is still damage.
    await psql(`delete from ${s}.journal_sessions_index where key = 'old'`);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(9);
  });

  it('rows edited under session_replication_role = replica (ordinary triggers silent) still lose their trust', async () => {
    const { store, answers, before } = await seeded();
    const s = schemaOf(store);
    await psql(`set session_replication_role = replica; delete from ${s}.journal_sessions_index where key = 'old'`);
    expect((await psql(`select trusted from ${s}.secondary_indexes where journal = 'sessions.jsonl'`)).trim()).toBe('f');
    expect(await answers()).toEqual(before);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(9);
  });

  it('an edited history row is 9 with the `history` member a data directory has; --repair quarantines it', async () => {
    const store = freshStoreUrl('hist');
    for (const v of [1, 2, 3]) expect((await crux(store, ['session', 'put', 'a', `{"v":${v}}`])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'compact'])).exitCode).toBe(0);
    const healthy = await json(store, ['journal', 'check']);
    expect(healthy.exitCode).toBe(0);
    expect(healthy.doc.journals.find((j: any) => j.name === 'sessions').history).toMatchObject({ files: 1, records: 3, problems: [] });
    await psql(`update ${schemaOf(store)}.history set body = replace(body, '{\\"v\\":2}', '{\\"v\\":9}') where journal = 'sessions.jsonl' and line = 2`);
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
