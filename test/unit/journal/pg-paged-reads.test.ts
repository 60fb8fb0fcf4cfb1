// Whole-journal reads on PostgreSQL go a page at a time, each page its own statement (pg-fold.ts eachPage): a long
// `journal check` is not bounded by one statement's timeout, and no read holds more than a page of rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { fetchStats } from '../../../src/journal/pg/pg-pages';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { COUNTERS } from './counters';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';

const TS = '2026-12-01T09:00:00.000Z';
const PAGE = 50;
const open = (url: string) => new PgStore(parseStoreUrl(url), { reporter: { warn: () => {} }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [COUNTERS] });

/** Busy for `ms` (the client's work between two pages, which a statement spanning them would count). */
const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe.skipIf(pgSkipReason() !== undefined)('paged whole-journal reads on PostgreSQL', () => {
  const url = freshStoreUrl();
  beforeAll(async () => {
    process.env.CRUX_TEST_FETCH_ROWS = String(PAGE);
    const store = open(url);
    try {
      // One batch of 5200 records (an import: more than the 5000 rows a fetch brought before), then small writes.
      await store.write(async (tx) => {
        await tx.load(COUNTERS);
        tx.append(
          COUNTERS,
          Array.from({ length: 5200 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i } })),
        );
      }, TS);
      for (let i = 0; i < 3; i += 1)
        await store.write(async (tx) => {
          await tx.load(COUNTERS);
          tx.append(COUNTERS, [{ ev: 'counter.added', data: { id: 'k1', n: 1 } }]);
        }, TS);
    } finally {
      await store.close();
    }
  });
  afterAll(() => {
    delete process.env.CRUX_TEST_FETCH_ROWS;
  });

  it('checks a journal whose read outlasts the statement timeout, each page within it', async () => {
    const store = open(url);
    try {
      await store.read(COUNTERS);
      // The server ends any one statement past 300 ms; the check works 0.1 ms on each row it reads (520 ms in all).
      await store.sql.unsafe('set statement_timeout = 300');
      let seen = 0;
      const progress = (_file: string, visited: number) => (busy((visited - seen) / 10), (seen = visited));
      const [report] = await store.check([COUNTERS], { repair: false, ts: TS, progress });
      expect(report).toMatchObject({ records: 5203, problems: [] });
    } finally {
      await store.close();
    }
  }, 30_000);

  it('holds at most a page of rows at once, in a check and in a read outside a transaction', async () => {
    const store = open(url);
    try {
      fetchStats.largest = 0;
      const [report] = await store.check([COUNTERS], { repair: false, ts: TS });
      expect(report).toMatchObject({ records: 5203, problems: [] });
      expect(fetchStats.largest).toBe(PAGE);
      fetchStats.largest = 0;
      const state = await store.read(COUNTERS);
      expect(state.get('k1')).toBe(1 + 3);
      expect(state.size).toBe(5200);
      expect(fetchStats.largest).toBe(PAGE);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('folds a batch as it reads it, holding none of it: the first record is folded before the second page is read', async () => {
    const store = open(url);
    try {
      let visited = 0;
      let foldedAt: number | undefined;
      const spy = { ...COUNTERS, evolve: (...args: Parameters<typeof COUNTERS.evolve>) => ((foldedAt ??= visited), COUNTERS.evolve(...args)) };
      const [report] = await store.check([spy], { repair: false, ts: TS, progress: (_file, n) => (visited = n) });
      expect(report).toMatchObject({ records: 5203, problems: [] });
      // Held until whole, the 5200-record batch would be folded once its last page (5150 rows visited before it) is read.
      expect(foldedAt).toBe(0);
    } finally {
      await store.close();
    }
  }, 30_000);

  it('compares the index rows with the replay entity by entity across pages: an edited value, a missing row, a stray entity', async () => {
    const bound: StoreSpec<Map<string, number>> = { ...COUNTERS, secondary: { names: ['n'], version: 1, values: (state, key) => [state.get(key)] } };
    const other = freshStoreUrl();
    const schema = new URL(other).searchParams.get('schema');
    const store = new PgStore(parseStoreUrl(other), { reporter: { warn: () => {} }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [bound] });
    try {
      await store.write(async (tx) => {
        await tx.load(bound);
        tx.append(
          bound,
          Array.from({ length: 300 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${String(i).padStart(3, '0')}`, n: i } })),
        );
      }, TS);
      const check = async () => (await store.check([bound], { repair: false, ts: TS }))[0]!;
      expect((await check()).derived).toBeUndefined();
      psql(`update ${schema}.journal_counters_index set num_value = 7 where key = 'k049'`);
      psql(`delete from ${schema}.journal_counters_index where key = 'k150'`);
      psql(`insert into ${schema}.journal_counters_index (key, name, num_value) values ('ghost', 'n', 1)`);
      expect((await check()).derived?.problems).toEqual(['journal_counters_index disagrees with a replay for 3 entities ("ghost", "k049", "k150")']);
    } finally {
      await store.close();
    }
  }, 30_000);
});
