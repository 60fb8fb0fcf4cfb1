// A PostgreSQL journal's rows changed by anything but crux — a row's body edited, a row deleted or inserted in the
// middle (where the last row, which the derived rows are bound to, stays as it was), the table truncated and put
// back, its trigger disabled first — never change an answer (SPEC §3, §11; issues 47 and 53): every read answers
// as a replay of the rows (a data directory holding them as its journal files) and tells the damage as that replay
// tells it, each problem once; crux's own writes (puts, compaction, repair, redaction, copy, import) keep the
// derived rows trusted; the next write, or `journal check --repair`, trusts them again.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FULL, stressIt, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { freshStoreUrl, pgSkipReason } from '../helpers/pg';
import { journalRows, sqlText as psql } from '../helpers/pg-sql';

const schemaOf = (store: string) => new URL(store).searchParams.get('schema')!;
const NOW = ['--now', '2026-01-05T00:00:00Z'];
const JOURNALS = ['sessions.jsonl', 'cases.jsonl'];

/** Sessions of two agents (one closed, one archived, one kept on) and cases sharing words: rows worth harming. */
async function seed(): Promise<string> {
  const store = freshStoreUrl('jguard');
  const at = (day: number, hour: number) => ['--now', `2026-01-0${day}T${String(hour).padStart(2, '0')}:00:00Z`];
  const writes: string[][] = [
    ['--agent', 'a', ...at(1, 1), 'session', 'put', 's0', '{"n":0}'],
    ['--agent', 'a', ...at(1, 2), 'session', 'put', 's1', '{"n":1}'],
    ['--agent', 'a', ...at(1, 3), 'session', 'close', 's1', '--outcome', 'completed'],
    ['--agent', 'b', ...at(1, 4), 'session', 'put', 's2', '{"n":2}'],
    ['--agent', 'b', ...at(1, 5), 'session', 'archive', 's2'],
    ['--agent', 'a', ...at(2, 1), 'session', 'put', 's3', '{"n":3}'],
    ['--agent', 'a', ...at(2, 2), 'session', 'put', 's0', '{"n":10}'],
    ['--agent', 'b', ...at(2, 3), 'session', 'put', 's4', '{"n":4}'],
    [...at(1, 6), 'case', 'record', '--task', 'deploy the api', '--action', 'a', '--outcome', 'o', '--failure'],
    [...at(1, 7), 'case', 'record', '--task', 'deploy the cache', '--action', 'a', '--outcome', 'o'],
    [...at(1, 8), 'case', 'record', '--task', 'fix the cache timeout', '--action', 'a', '--outcome', 'o', '--failure'],
    [...at(1, 9), 'case', 'record', '--task', 'rotate the keys', '--action', 'a', '--outcome', 'o'],
  ];
  for (const args of writes) {
    const run = await crux(store, args);
    expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
  }
  return store;
}

let seedOnce: Promise<string> | undefined;
/**
 * A fresh store holding the seed's rows: written once a file, then a `journal copy` a test (one command, not
 * twelve; a copy's rows are the original's, its derived rows trusted: the last test holds that of copies).
 */
async function seeded(): Promise<string> {
  seedOnce ??= seed();
  const store = freshStoreUrl('jguard');
  const copy = await crux(await seedOnce, ['journal', 'copy', '--to', store]);
  expect(copy.exitCode, copy.stderr).toBe(0);
  return store;
}

const READS: string[][] = [
  ['session', 'list'],
  ['session', 'list', '--limit', '1'],
  ['session', 'list', '--limit', '3'],
  ['session', 'list', '--all-agents'],
  ['session', 'list', '--all-agents', '--limit', '3'],
  ['session', 'list', '--all', '--limit', '2', '--all-agents'],
  ['session', 'list', '--status', 'closed', '--all-agents'],
  ['session', 'list', '--status', 'active', '--limit', '1'],
  ['session', 'list', '--stranded', '--all-agents', '--limit', '2'],
  ['session', 'get', 's0'],
  ['session', 'get', 's1'],
  ['session', 'history', 's1'],
  ['case', 'list'],
  ['case', 'list', '--only-failure', '--limit', '1'],
  ['case', 'retrieve', 'deploy', 'cache'],
];

/** Each derived binding of the store's journals and whether it says trusted (reads may then answer from its rows). */
const trusted = async (store: string): Promise<string[]> =>
  (
    await psql(
      `select 'index ' || journal || ' ' || trusted::text from ${schemaOf(store)}.secondary_indexes
       union all select 'terms ' || journal || ' ' || trusted::text from ${schemaOf(store)}.term_indexes order by 1`,
    )
  )
    .split('\n')
    .filter(Boolean);
// The cases' index rows: its activity tally's alone (pg-tally.ts).
const allTrusted = ['index cases.jsonl true', 'index sessions.jsonl true', 'terms cases.jsonl true'];

/** A data directory holding the store's journal rows as its files (no cache/): what a replay of the rows reads. */
async function rowsAsFiles(store: string): Promise<string> {
  const dir = join(tempDir(), 'replay');
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const file of JOURNALS) {
    const lines = await journalRows(store, file);
    if (lines.length > 0) fs.writeFileSync(join(dir, file), `${lines.join('\n')}\n`);
  }
  return dir;
}

/** Each journal's row numbers in order: row k of a replay file is the (k)th of them (rows deleted leave gaps). */
async function lineNumbers(store: string): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const file of JOURNALS) {
    const table = `journal_${file.replace(/\.jsonl$/, '')}`;
    const lines = await psql(`select line from ${schemaOf(store)}.${table} order by line`);
    out.set(file, lines.split('\n').filter(Boolean).map(Number));
  }
  return out;
}

interface Warning {
  file: string;
  line: number;
  reason: string;
}

/** A read with --json: its document without its warnings and where the store is, the warnings, stderr's lines. */
async function read(store: string, args: string[]): Promise<{ exit: number; doc: unknown; warnings: Warning[]; stderr: string[] }> {
  const run = await crux(store, ['--json', ...NOW, ...args]);
  const stderr = run.stderr.split('\n').filter(Boolean);
  const parsed = JSON.parse(run.exitCode === 0 ? run.stdout : (stderr.find((l) => l.startsWith('{')) ?? '{}')) as Record<string, unknown>;
  const { warnings = [], data_dir: _dir, replay_ms: _ms, ...doc } = parsed as { warnings?: Warning[]; data_dir?: unknown; replay_ms?: unknown };
  return { exit: run.exitCode, doc, warnings, stderr: stderr.filter((l) => !l.startsWith('{')) };
}

/**
 * Every read of the store answers as the same read of a replay of its rows: the same exit and document, and the
 * same warnings (row numbers taken to the replay file's lines), each once, each said once on stderr. With
 * `readSome` (derived rows trusted again over a damaged journal: a read by key reads its own rows), each warning
 * is one the replay tells.
 */
async function expectReplayAnswers(store: string, readSome = false): Promise<{ doc: unknown; warnings: Warning[] }[]> {
  const replay = await rowsAsFiles(store);
  const lines = await lineNumbers(store);
  const out: { doc: unknown; warnings: Warning[] }[] = [];
  for (const args of READS) {
    const what = args.join(' ');
    const want = await read(replay, args);
    const got = await read(store, args);
    expect({ exit: got.exit, doc: got.doc }, what).toEqual({ exit: want.exit, doc: want.doc });
    const asFile = got.warnings.map((w) => ({ ...w, line: lines.get(w.file)!.indexOf(w.line) + 1 }));
    if (readSome) for (const w of asFile) expect(want.warnings, what).toContainEqual(w);
    else expect(asFile, what).toEqual(want.warnings);
    expect(new Set(got.stderr).size, `${what}: ${got.stderr.join('\n')}`).toBe(got.stderr.length);
    expect(got.stderr.length, `${what}: ${got.stderr.join('\n')}`).toBe(got.warnings.length);
    out.push({ doc: got.doc, warnings: got.warnings });
  }
  return out;
}

const t = (store: string, journal = 'sessions') => `${schemaOf(store)}.journal_${journal}`;
/** The row of session s1's close (the third of the journal): in the middle, not the last. */
const closeRow = (store: string) => `(select line from ${t(store)} where body like '%"ev":"session.closed"%' order by line limit 1)`;

describe.skipIf(pgSkipReason() !== undefined)("a PostgreSQL journal's rows changed by anything but crux", () => {
  for (const [what, harm] of [
    ["a middle row's body edited", (s: string) => `update ${t(s)} set body = overlay(body placing 'X' from 3 for 1) where line = ${closeRow(s)}`],
    ['a middle row deleted', (s: string) => `delete from ${t(s)} where line = ${closeRow(s)}`],
    [
      'a row inserted before the others (a copy of a middle one)',
      (s: string) =>
        `insert into ${t(s)} (line, seq, h, body, key, resets) select 0, -seq, h || 'x', body, key, resets from ${t(s)} where line = ${closeRow(s)}`,
    ],
    [
      "a case row's body edited",
      (s: string) => `update ${t(s, 'cases')} set body = overlay(body placing 'X' from 3 for 1) where line = (select min(line) + 1 from ${t(s, 'cases')})`,
    ],
    [
      'the table truncated and put back without one row (its row trigger disabled meanwhile)',
      (s: string) => `begin;
        create temp table kept as select * from ${t(s)} where line <> ${closeRow(s)};
        alter table ${t(s)} disable trigger crux_journal_rows;
        truncate ${t(s)};
        insert into ${t(s)} select * from kept;
        alter table ${t(s)} enable always trigger crux_journal_rows;
        commit;`,
    ],
  ] as const) {
    // Two kinds of harm in every run, the others in npm run test:stress (and the differential test's under CI's run).
    const test = what === "a middle row's body edited" || what === 'a middle row deleted' ? it : stressIt;
    test(`${what}: every read answers as a replay and tells the damage once; a write trusts the rows again`, async () => {
      const store = await seeded();
      expect(await trusted(store)).toEqual(allTrusted);
      // The store before the harm answers as a replay, telling nothing: in CI's run (CRUX_TEST_FULL) and test:stress;
      // npm test holds the same of a healthy store after the repair below and in the last test.
      if (FULL) expect((await expectReplayAnswers(store)).every((r) => r.warnings.length === 0)).toBe(true);
      await psql(harm(store));
      const after = await expectReplayAnswers(store);
      // Cleared in the harm's own transaction, for every derived table of the journal.
      expect(await trusted(store)).not.toEqual(allTrusted);
      // The harm is seen: reads tell it (and a list's answer changed where the closing row went).
      expect(after.some((r) => r.warnings.length > 0)).toBe(true);
      const check = await read(store, ['journal', 'check']);
      expect(check.exit).toBe(9);
      // A write rebuilds the derived rows from the rows as they are, and trusts them again.
      expect((await crux(store, [...NOW, '--agent', 'a', 'session', 'put', 's5', '{}'])).exitCode).toBe(0);
      expect((await crux(store, [...NOW, 'case', 'record', '--task', 'later', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
      expect(await trusted(store)).toEqual(allTrusted);
      // `journal check --repair` quarantines what is damaged; the store is healthy, trusted, and answers as a replay.
      expect((await crux(store, ['journal', 'check', '--repair'])).exitCode).toBe(0);
      expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
      expect(await trusted(store)).toEqual(allTrusted);
      // The repaired store answers as a replay, telling nothing: after every harm in CI's run, after the first in
      // npm test (its last test holds the same of a store crux's own writes kept).
      if (FULL || what === "a middle row's body edited") expect((await expectReplayAnswers(store)).every((r) => r.warnings.length === 0)).toBe(true);
    });
  }

  it("the journal's trigger disabled (or dropped with its function), then a row edited: nothing is trusted; the next write guards the table again", async () => {
    const store = await seeded();
    const s = schemaOf(store);
    await psql(`alter table ${t(store)} disable trigger crux_journal_rows`);
    await psql(`update ${t(store)} set body = overlay(body placing 'X' from 3 for 1) where line = ${closeRow(store)}`);
    // Nothing cleared the flags: the catalog shows the guard gone, so they are not believed.
    expect(await trusted(store)).toEqual(allTrusted);
    expect((await expectReplayAnswers(store)).some((r) => r.warnings.length > 0)).toBe(true);
    expect((await crux(store, [...NOW, '--agent', 'a', 'session', 'put', 's5', '{}'])).exitCode).toBe(0);
    const guards = async (table: string) =>
      (await psql(`select count(*) from pg_trigger where tgrelid = '${s}.${table}'::regclass and tgenabled = 'A' and tgname like 'crux_journal_%'`)).trim();
    expect(await guards('journal_sessions')).toBe('2');
    // A store made before the journals had guards (as one is without the function): `store init` makes them, and
    // leaves the rows untrusted (they may have been edited meanwhile) until the next write to each journal.
    await psql(`drop function ${s}.crux_journal_changed() cascade`);
    expect(await guards('journal_cases')).toBe('0');
    await psql(`update ${t(store, 'cases')} set body = overlay(body placing 'X' from 3 for 1) where line = 2`);
    expect((await expectReplayAnswers(store)).some((r) => r.warnings.length > 0)).toBe(true);
    const init = await read(store, ['store', 'init']);
    expect(init.doc).toMatchObject({ created: expect.arrayContaining(['triggers of journal_sessions', 'triggers of journal_cases']) });
    expect([await guards('journal_cases'), await guards('journal_sessions')]).toEqual(['2', '2']);
    expect((await expectReplayAnswers(store)).some((r) => r.warnings.length > 0)).toBe(true);
    expect((await crux(store, [...NOW, 'case', 'record', '--task', 'later', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    expect((await crux(store, [...NOW, '--agent', 'a', 'session', 'put', 's6', '{}'])).exitCode).toBe(0);
    expect(await trusted(store)).toEqual(allTrusted);
    await expectReplayAnswers(store, true);
  });

  it("crux's own writes keep the rows trusted: compaction, repair, redaction, copy, import", async () => {
    const store = await seeded();
    const runs: string[][] = [
      ['journal', 'compact'],
      ['journal', 'check', '--repair'],
      ['journal', 'redact'],
      [...NOW, '--agent', 'a', 'session', 'put', 's7', '{}'],
    ];
    for (const args of runs) {
      const run = await crux(store, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(await trusted(store), args.join(' ')).toEqual(allTrusted);
    }
    const copy = freshStoreUrl('jguard');
    expect((await crux(store, ['journal', 'copy', '--to', copy])).exitCode).toBe(0);
    expect(await trusted(copy)).toEqual(allTrusted);
    const exported = await crux(store, ['session', 'export', '--all-agents']);
    expect(exported.exitCode).toBe(0);
    const imported = freshStoreUrl('jguard');
    expect((await crux(imported, ['case', 'record', '--task', 'first', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    const run = await crux(imported, ['session', 'import', '-'], { input: exported.stdout });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await trusted(imported)).toEqual(allTrusted);
    await expectReplayAnswers(store);
  });
});
