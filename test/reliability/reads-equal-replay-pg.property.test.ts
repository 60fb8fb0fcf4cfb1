// Every read of a PostgreSQL store equals a replay of its journal rows (SPEC §3, §11; issues 47 and 53): random
// histories written through the operations, then one kind of harm to what the reads may trust — the derived rows
// (secondary keys, terms) put back from an earlier point, one of them edited, or rows of another schema's — or to
// the journal's own rows (one row's body changed, one deleted, or one inserted, in the middle). Each read (as
// reads-equal-replay.property.test.ts makes them) answers as the same read of a data directory holding the same rows as journal files (no cache/: a replay), and
// tells the problems that replay tells (rows taken to the file's lines), each once, on stderr and in `warnings`. In CI and test:stress (a server at hand): fewer histories
// than the data directory's (each costs a schema and a connection per read).
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import Module from 'node:module';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../src/cli/context';
import * as ops from '../../src/cli/operations/session';
import * as caseOps from '../../src/cli/operations/case';
import { closeStores } from '../../src/cli/store';
import { sessionCounts } from '../../src/cli/ui/overview';
import type { SessionStatus } from '../../src/domain/session/machine';
import { caseScope } from '../../src/cli/operations/scope';
import { caseIdsStartingWith } from '../../src/domain/case/store';
import type { CaseId, LogicalSessionId } from '../../src/shared/ids';
import { CruxError } from '../../src/shared/errors';
import { FULL, journalLines, tempDir } from '../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../helpers/pg';
import { scaled, TIMEOUT } from './harness';
import { answer, JOURNALS, type Read, SORTED_CASE_READS } from './replay-surfaces';

// Histories (CI's run and the stress run only, as every PostgreSQL half of a parameterized suite): 30 in CI, 150 under stress.
const RUNS = scaled(30, 150);
const START = Date.parse('2026-12-01T00:00:00Z');
const AGENTS = [undefined, 'a', 'b'] as const;
const WORDS = ['deploy', 'cache', 'index', 'timeout'];

type Step =
  | { op: 'put' | 'close' | 'archive'; agent: number; id: number; skew: number }
  | { op: 'record'; words: number[]; success: boolean; tags?: number[]; skew?: number; reward?: number }
  | { op: 'reuse'; words: number[] };
type Harm = { how: 'stale' | 'edit' | 'foreign' | 'journal'; at: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), agent: fc.nat(2), id: fc.nat(3), skew: fc.integer({ min: -600, max: 30 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('close' as const, 'archive' as const), agent: fc.nat(2), id: fc.nat(3), skew: fc.constant(0) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('record' as const),
      words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 2 }),
      success: fc.boolean(),
      tags: fc.array(fc.nat(WORDS.length - 1), { maxLength: 2 }),
      skew: fc.integer({ min: -600, max: 30 }),
      reward: fc.constantFrom(0, 0.5, 1),
    }),
  },
  // A retrieve that marks its matches reused: the order by reused.
  { weight: 1, arbitrary: fc.record({ op: fc.constant('reuse' as const), words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 2 }) }) },
);
// 'journal': one journal row changed in place, deleted, or a copy of one inserted before the others — in the middle
// of the journal, where the last row the derived rows are bound to stays as it was. The journal tables' triggers
// withdraw the derived rows' trust (pg-trust.ts); before them, the rows answered what the row said before — a
// session the changed close row ended stayed closed where a replay, passing the row over, lists it (seed
// 1116863214: `session list --all-agents --limit 3` answered [] where a replay lists s0).
const harm = fc.record({ how: fc.constantFrom('stale' as const, 'edit' as const, 'foreign' as const, 'journal' as const), at: fc.nat() });

const FILTERS = [
  { all: false, archived: false, stranded: false },
  { all: true, archived: false, stranded: false },
  { all: false, archived: true, stranded: false },
  { all: false, archived: false, stranded: true },
];
const STATUSES: (readonly SessionStatus[])[] = [['closed'], ['archived'], ['active', 'closed']];
const READS: Read[] = [
  ...[0, 1, 2, 3].map((i): Read => ({ name: `session get s${i}`, file: 'sessions.jsonl', run: (ctx) => ops.getSession(ctx, `s${i}` as LogicalSessionId) })),
  ...FILTERS.flatMap((f) =>
    [false, true].flatMap((allAgents) =>
      [undefined, 1, 3].map(
        (limit): Read => ({
          name: `session list ${JSON.stringify({ ...f, allAgents, limit })}`,
          file: 'sessions.jsonl',
          run: async (ctx) => {
            const { document, total } = await ops.countedSessions(ctx, { ...f, allAgents }, undefined, { limit }, { count: true });
            return { document, total };
          },
        }),
      ),
    ),
  ),
  // --status, read through status_updated's rows when limited (newest-list.ts).
  ...STATUSES.flatMap((statuses) =>
    [false, true].flatMap((allAgents) =>
      [undefined, 1, 3].map(
        (limit): Read => ({
          name: `session list --status ${statuses.join(',')} ${JSON.stringify({ allAgents, limit })}`,
          file: 'sessions.jsonl',
          run: async (ctx) => {
            const where = (s: { status: string }) => (statuses as readonly string[]).includes(s.status);
            const filter = { all: true, archived: false, stranded: false, allAgents };
            const { document, total } = await ops.countedSessions(ctx, filter, undefined, { limit, where }, { count: true, statuses });
            return { document, total };
          },
        }),
      ),
    ),
  ),
  // The overview's counts: index ranges counted (domain/session/counts.ts).
  { name: 'ui overview sessions', file: 'sessions.jsonl', run: (ctx) => sessionCounts(ctx) },
  { name: 'case list', file: 'cases.jsonl', run: (ctx) => caseOps.listCases(ctx, {}) },
  { name: 'case list --only-failure --limit 2', file: 'cases.jsonl', run: (ctx) => caseOps.listCases(ctx, { success: false }, { limit: 2 }) },
  ...SORTED_CASE_READS,
  { name: 'ui /api/overview/tags', file: 'cases.jsonl', api: '/api/overview/tags' },
  // The activity chart: the counts the writes keep in each keyed journal's index rows (pg-tally.ts), the cases' journal
  // read too; a day as well, so that the window starts among the history's records. Made after every history.
  ...['/api/overview/activity', '/api/overview/activity?days=1'].map(
    (api): Read => ({ name: `ui ${api}`, file: 'sessions.jsonl', api, whole: false, also: 'cases.jsonl' }),
  ),
  ...(
    [
      ['', 2],
      ['c', 200],
    ] as const
  ).map(
    ([prefix, max]): Read => ({
      name: `__complete case ${prefix} (${max})`,
      file: 'cases.jsonl',
      run: (ctx) => caseIdsStartingWith(caseScope(ctx), prefix, max),
    }),
  ),
  {
    name: 'case retrieve',
    file: 'cases.jsonl',
    run: (ctx) => caseOps.retrieve(ctx, { text: 'deploy cache', topK: 3, onlySuccess: false, minSimilarity: 0 }, false),
  },
];

const schemaOf = (url: string) => new URL(url).searchParams.get('schema')!;
const q = (url: string, sql: string) => psql(sql, url);
/** The derived tables of the store's journals that exist (the rows reads may trust). */
const derivedTables = (url: string) =>
  q(url, `select tablename from pg_tables where schemaname = '${schemaOf(url)}' and (tablename like '%\\_index' or tablename like '%\\_terms') order by 1`)
    .split('\n')
    .filter(Boolean);

async function write(url: string, s: Step, now: number, recorded: CaseId[]): Promise<void> {
  const at = s.op === 'put' || s.op === 'record' ? now + (s.skew ?? 0) * 60_000 : now;
  const ctx = contextOf(
    { store: url, agent: s.op === 'record' || s.op === 'reuse' ? undefined : AGENTS[s.agent], now: new Date(at).toISOString() },
    {},
    () => {},
  );
  try {
    if (s.op === 'reuse') {
      await caseOps.retrieve(ctx, { text: s.words.map((w) => WORDS[w]).join(' '), topK: 2, onlySuccess: false, minSimilarity: 0 }, true);
      return;
    }
    if (s.op === 'record') {
      const draft = {
        task: s.words.map((w) => WORDS[w]).join(' '),
        context: null,
        action: 'a',
        outcome: 'o',
        success: s.success,
        reward: s.reward ?? 1,
        tags: [...new Set((s.tags ?? []).map((w) => WORDS[w]!))],
        source_receipt: null,
      };
      recorded.push((await caseOps.recordCase(ctx, draft)).case.case_id as CaseId);
      return;
    }
    const sid = `s${s.id}` as LogicalSessionId;
    if (s.op === 'put') await ops.putSession(ctx, sid, { state: '{}' });
    else if (s.op === 'close') await ops.closeSession(ctx, sid, { outcome: 'completed' });
    else await ops.archiveSession(ctx, sid, 'done');
  } catch (error) {
    if (!(error instanceof CruxError)) throw error;
  }
}

/** A data directory holding the store's journal rows as its files: what a replay of the rows reads. */
function rowsAsFiles(url: string): string {
  const dir = join(tempDir(), 'replay');
  fs.mkdirSync(dir, { mode: 0o700 });
  for (const file of JOURNALS) {
    const lines = journalLines(url, file);
    if (lines.length > 0) fs.writeFileSync(join(dir, file), `${lines.join('\n')}\n`);
  }
  return dir;
}

/** Each journal's row numbers in order: the replay file's line k holds the k-th (a row deleted leaves a gap). */
function rowLines(url: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const file of JOURNALS) {
    const table = `journal_${file.replace(/\.jsonl$/, '')}`;
    const exists = q(url, `select count(*) from pg_tables where schemaname = '${schemaOf(url)}' and tablename = '${table}'`).trim() === '1';
    out.set(
      file,
      exists
        ? q(url, `select line from "${schemaOf(url)}".${table} order by line`)
            .split('\n')
            .filter(Boolean)
            .map(Number)
        : [],
    );
  }
  return out;
}

function doHarm(url: string, other: string, saved: Map<string, string>, h: Harm): void {
  const s = schemaOf(url);
  const tables = derivedTables(url);
  const table = tables[h.at % Math.max(1, tables.length)];
  switch (h.how) {
    case 'stale':
      // The rows as they were at an earlier point, put back (a restore of those tables alone).
      for (const [t, copy] of saved) q(url, `delete from "${s}".${t}; insert into "${s}".${t} select * from "${s}".${copy};`);
      return;
    case 'edit':
      if (table !== undefined)
        q(url, `update "${s}".${table} set key = key || 'x' where ctid = (select ctid from "${s}".${table} order by key offset ${h.at % 3} limit 1)`);
      return;
    case 'foreign':
      for (const t of tables) {
        const exists = q(url, `select count(*) from pg_tables where schemaname = '${schemaOf(other)}' and tablename = '${t}'`).trim() === '1';
        if (exists) q(url, `delete from "${s}".${t}; insert into "${s}".${t} select * from "${schemaOf(other)}".${t};`);
      }
      return;
    case 'journal': {
      const journal = ['journal_sessions', 'journal_cases'][h.at % 2]!;
      const rows = Number(q(url, `select count(*) from pg_tables where schemaname = '${s}' and tablename = '${journal}'`).trim());
      if (rows !== 1) return;
      const row = `(select min(line) + ${h.at % 3} from "${s}".${journal})`;
      const kind = Math.floor(h.at / 3) % 3;
      // One character of one row's body changed, as a hand or a disk would; or the row deleted; or a copy of it
      // inserted before the first row (another sequence number, the same bytes).
      if (kind === 0) q(url, `update "${s}".${journal} set body = overlay(body placing 'X' from 3 for 1) where line = ${row}`);
      else if (kind === 1) q(url, `delete from "${s}".${journal} where line = ${row} and line < (select max(line) from "${s}".${journal})`);
      else
        q(
          url,
          `insert into "${s}".${journal} (line, seq, h, body, key, resets) select (select min(line) - 1 from "${s}".${journal}), -seq, h || 'x', body, key, resets from "${s}".${journal} where line = ${row}`,
        );
      return;
    }
  }
}

describe.skipIf(!FULL || pgSkipReason() !== undefined)('every read of a PostgreSQL store equals a replay of its rows (differential)', () => {
  // src/cli/store.ts requires the engine (bundled by esbuild): this module graph's instance, in require's cache (as run-cli.ts).
  beforeAll(async () => {
    const storePg = await import('../../src/cli/store-pg');
    const file = resolve(__dirname, '../../src/cli/store-pg.ts');
    const loader = Module as unknown as { _extensions: Record<string, unknown>; _cache: Record<string, unknown> };
    loader._extensions['.ts'] ??= () => {
      throw new Error('a TypeScript module required outside the test module graph');
    };
    loader._cache[file] = { id: file, filename: file, loaded: true, exports: storePg, children: [], paths: [] };
  });
  it(
    'random histories, one kind of harm to the derived rows or the journal rows',
    async () => {
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.array(step, { minLength: 3, maxLength: 10 }),
            fc.array(step, { minLength: 1, maxLength: 4 }),
            fc.nat(),
            harm,
            fc.subarray(
              READS.map((r) => r.name),
              { minLength: 4, maxLength: 8 },
            ),
            fc.nat(2),
            async (before, after, split, h, reads, reader) => {
              const url = freshStoreUrl('rr');
              const other = freshStoreUrl('rr');
              const recorded: CaseId[] = [];
              let now = START;
              for (const s of before) await write(url, s, (now += 60_000), recorded);
              for (const s of [...after].reverse()) await write(other, s, now, []);
              // The derived rows as they are now, kept aside for a 'stale' harm.
              const saved = new Map<string, string>();
              for (const t of derivedTables(url)) {
                q(url, `create table "${schemaOf(url)}".${t}_saved as select * from "${schemaOf(url)}".${t}`);
                saved.set(t, `${t}_saved`);
              }
              for (const s of after.slice(split % (after.length + 1))) await write(url, s, (now += 60_000), recorded);
              doHarm(url, other, saved, h);
              const replay = rowsAsFiles(url);
              const lines = rowLines(url);
              // Each store's connections closed after its run (a server takes a hundred clients).
              await closeStores();
              for (const read of READS.filter((r) => reads.includes(r.name) || r.name.includes('/api/overview/activity'))) {
                const want = await answer(replay, AGENTS[reader], now + 3_600_000, read);
                const got = await answer(url, AGENTS[reader], now + 3_600_000, read);
                // Each read a command of its own, as a process runs it: the store this process keeps by URL (for `crux
                // mcp`) tells what it passes over to the context that opened it.
                await closeStores();
                const what = `${read.name} as ${AGENTS[reader] ?? '(no agent)'} after ${h.how}`;
                expect(got.out, what).toEqual(want.out);
                // The damage a replay tells, told the same (a row's number taken to its line in the replay's file).
                const told = got.warnings.map((w) => ({ ...w, line: (lines.get(w.file) ?? []).indexOf(w.line) + 1 }));
                expect(told, `${what}: ${got.stderr.join('')}`).toEqual(want.warnings);
                for (const r of [want, got]) {
                  expect(new Set(r.stderr).size, `${what}: ${r.stderr.join('')}`).toBe(r.stderr.length);
                  expect(new Set(r.warnings.map((w) => JSON.stringify(w))).size, what).toBe(r.warnings.length);
                }
              }
              await closeStores();
            },
          ),
          // CRUX_TEST_FC_SEED and CRUX_TEST_FC_PATH replay a failure fast-check printed.
          { numRuns: RUNS, ...(process.env.CRUX_TEST_FC_SEED ? { seed: Number(process.env.CRUX_TEST_FC_SEED), path: process.env.CRUX_TEST_FC_PATH } : {}) },
        );
      } finally {
        await closeStores();
      }
    },
    Math.max(TIMEOUT, 600_000, RUNS * 10_000),
  );
});
