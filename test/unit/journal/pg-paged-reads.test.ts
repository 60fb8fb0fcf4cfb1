// Whole-journal reads on PostgreSQL go a page at a time, each page its own statement (pg-fold.ts eachPage): a long
// `journal check` is not bounded by one statement's timeout, and no read holds more than a page of rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { fetchStats } from '../../../src/journal/pg/pg-fold';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { COUNTERS } from './counters';
import { freshStoreUrl, pgSkipReason } from '../../helpers/pg';

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
});
