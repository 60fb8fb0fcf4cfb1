// given(the same cases written to a PostgreSQL store and to a data directory: imports, replacements, deletions,
// records, reuse) → when(a limited list newest first or sorted by a column, by outcome and by tag; completion) →
// then(what a replay of the data directory's journal answers, from the store's term rows: no whole bank read).
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { newestCases, sortedCases, type ColumnOrder } from '../../../src/domain/case/newest';
import { caseIdsStartingWith, deleteCase, importCases, recordCase, retrieveCases, CASE_STORE, type CaseScope } from '../../../src/domain/case/store';
import type { Case } from '../../../src/domain/case/case';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { CaseId } from '../../../src/shared/ids';
import { FULL, tempDir } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql, recording } from '../../helpers/pg';
import { body, FILTERS, random, TAGS } from './fixtures';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const quiet = { warn: () => {} };

/** The same history written to `dir`: 300 cases, then rounds of deletions, replacements, a record and a reuse. */
async function write(dir: JournalStore, seed: number): Promise<void> {
  const rand = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const caseOf = (i: number) =>
    body({
      id: `c${i}`,
      task: `task ${i} ${pick(TAGS)} ${pick(['deploy', 'prod', 'the'])}`,
      tags: TAGS.filter(() => rand() < 0.3),
      success: rand() < 0.7,
      reward: pick([0, 0.25, 0.5, 1]),
      created: pick(['2026-01-01T00:00:00.000Z', '2025-06-30T23:59:59.999Z', '0001-02-03T04:05:06.007Z']),
      reused: pick([0, 1]),
    }) as unknown as Case;
  await importCases(
    { dir, now: NOW },
    Array.from({ length: 300 }, (_, i) => caseOf(i)),
  );
  for (let round = 0; round < 4; round++) {
    const s: CaseScope = { dir, now: NOW + round };
    for (let k = 0; k < 6; k++) await deleteCase(s, `c${Math.floor(rand() * 300)}` as CaseId).catch(() => undefined);
    await importCases(
      s,
      Array.from({ length: 8 }, () => caseOf(Math.floor(rand() * 330))),
    );
    const draft = {
      task: `new ${round} alpha`,
      context: null,
      action: 'a',
      outcome: 'o',
      success: round % 2 === 0,
      reward: 0.5,
      tags: ['alpha'],
      source_receipt: null,
    };
    await recordCase(s, draft, `n${round}` as CaseId);
    await retrieveCases(s, { text: 'alpha deploy', topK: 3, onlySuccess: false, minSimilarity: 0 }, true);
  }
}

describe.skipIf(pgSkipReason() !== undefined)('limited case lists on PostgreSQL, from the term rows', () => {
  it('answer as a replay of the same journal in a data directory, without reading the whole bank', async () => {
    const store = new PgStore(parseStoreUrl(freshStoreUrl('caselist')), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    const truth = new DataDir(join(tempDir(), 'truth'), quiet, 5_000);
    // Reads through it may open a connection of its own (set on it, not on `store`): closed too, below.
    const counting = Object.create(store) as PgStore;
    try {
      await write(store, 3);
      await write(truth, 3);
      let whole = 0;
      counting.read = async (spec) => {
        whole++;
        return store.read(spec);
      };
      const pg: CaseScope = { dir: counting, now: NOW };
      const dir: CaseScope = { dir: truth, now: NOW };
      // Each filter, limit and count newest first, and sorted by a column either way: in `npm test` one column a
      // combination in turn (each column 14 times), every column in CI's run (FULL).
      const keys: ColumnOrder[] = ['created', 'reward', 'reused'];
      let combination = 0;
      for (const filter of FILTERS)
        for (const limit of [1, 30, 1000])
          for (const count of [true, false]) {
            const what = `${JSON.stringify(filter)} ${limit} ${count}`;
            // Without `count`, a store may leave total undefined (a database counts only when asked).
            const asked = (r: { cases: Case[]; total: number | undefined } | undefined) => r && { cases: r.cases, total: count ? r.total : 'not asked' };
            expect(asked(await newestCases(pg, filter, limit, count)), what).toEqual(asked(await newestCases(dir, filter, limit, count)));
            for (const key of FULL ? keys : [keys[combination++ % keys.length]!])
              for (const descending of [true, false]) {
                const sort = { key, descending };
                expect(asked(await sortedCases(pg, filter, sort, limit, count)), `${what} ${key} ${descending}`).toEqual(
                  asked(await sortedCases(dir, filter, sort, limit, count)),
                );
              }
          }
      for (const prefix of ['', 'c', 'c1', 'c29', 'n', 'zz'])
        for (const max of [1, 7, 1000])
          expect(await caseIdsStartingWith(pg, prefix, max), `${prefix} ${max}`).toEqual(await caseIdsStartingWith(dir, prefix, max));
      expect(whole).toBe(0);
    } finally {
      await counting.close();
      await store.close();
    }
  });

  it('reads a page sorted by created, reward or reused, either way (ties newest first), through a b-tree: no tie sorted', async () => {
    const url = freshStoreUrl('caseorder');
    const store = new PgStore(parseStoreUrl(url), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    try {
      await write(store, 5);
      const seen = recording(store);
      for (const key of ['created', 'reward', 'reused'] as ColumnOrder[])
        for (const descending of [true, false]) {
          seen.length = 0;
          await sortedCases({ dir: store, now: NOW }, {}, { key, descending }, 20, true);
          // The page's statement (by created, the edges' before it).
          const page = seen.filter((text) => /order by [\s\S]* limit \$1 offset \$2$/.test(text)).at(-1);
          expect(page, `${key} ${descending}`).toBeDefined();
          // The server's plan with the table's statistics (as autovacuum keeps them) and sequential scans off (a table
          // this small would be read whole anyway): an index gives the rows in the page's order, the sort fact and the
          // tie both (only the key of rows tied on both sorted), where one by the fact alone sorts each run of ties.
          const table = /from (\S+) r /.exec(page!)![1];
          const plan = psql(`analyze ${table}; set enable_seqscan = off; explain (analyze, costs off) ${page!.replace('$1', '20').replace('$2', '0')}`, url);
          const what = `${key} ${descending ? 'desc' : 'asc'}:\n${plan}`;
          expect(plan, what).toMatch(/Index Scan/);
          const presorted = plan.split('\n').filter((l) => l.includes('Presorted Key:'));
          for (const line of presorted) expect(line, what).toMatch(/' '::text, 6\)/);
          expect(plan, what).not.toMatch(/^\s*(->\s*)?Sort\s+\(/m);
        }
    } finally {
      await store.close();
    }
  });
});
