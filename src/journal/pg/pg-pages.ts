// A whole journal's rows (or any long read's) a page at a time on PostgreSQL: a cursor declared on the server and
// read by FETCH, each page its own statement, so that no read of a whole journal is bounded by one statement's
// timeout (client.ts: CRUX_LOCK_TIMEOUT + 60 s) while a frozen server still ends each page within it, and no read
// holds more than a page of rows.
import type { Sql } from './client';
import { testHook } from '../../shared/test-hooks';

/** Rows fetched per statement when a whole journal is read. */
export const FETCH_ROWS = 5000;

/** What the paged reads fetched (a test's view of the memory they hold: the most rows one fetch brought). */
export const fetchStats = { largest: 0 };

/** Rows fetched per statement (CRUX_TEST_FETCH_ROWS: fewer, so that tests reach many pages with a few rows). */
const fetchRows = (): number => Number(testHook('CRUX_TEST_FETCH_ROWS') ?? FETCH_ROWS) || FETCH_ROWS;

let cursors = 0;

/**
 * Hands `use` the rows `query` selects, a page at a time: a cursor declared on the server (its own snapshot, taken
 * when it is declared: the rows as of one moment while writers go on) and read by FETCH, each page its own
 * statement, so that a read of a whole journal is never bounded by one statement's timeout while a frozen server
 * still ends each page within it (client.ts). `inTransaction`: `q` runs a transaction (the cursor lives in it);
 * else the read opens its own, read-only and repeatable read, and ends it. Nothing else may run on `q` meanwhile:
 * `use` is synchronous.
 */
export async function eachPage(q: Sql, query: string, params: unknown[], inTransaction: boolean, use: (rows: unknown[][]) => void): Promise<void> {
  for await (const rows of pages(q, query, params, inTransaction)) use(rows);
}

/** The pages of eachPage as they are read: the caller runs nothing else on `q` until it has read them all, or stops. */
export async function* pages(q: Sql, query: string, params: unknown[], inTransaction: boolean): AsyncGenerator<unknown[][]> {
  const cursor = `crux_rows_${++cursors}`;
  const size = fetchRows();
  if (!inTransaction) await q.unsafe('begin isolation level repeatable read read only');
  let done = false;
  try {
    await q.unsafe(`declare ${cursor} no scroll cursor for ${query}`, params as never[]);
    for (;;) {
      const rows = (await q.unsafe(`fetch ${size} from ${cursor}`).values()) as unknown[][];
      fetchStats.largest = Math.max(fetchStats.largest, rows.length);
      if (rows.length > 0) yield rows;
      if (rows.length < size) break;
    }
    await q.unsafe(`close ${cursor}`);
    if (!inTransaction) await q.unsafe('commit');
    done = true;
  } finally {
    // Failed, or stopped early by the caller: the cursor goes with the transaction (its own), or is closed.
    if (!done) {
      if (!inTransaction) await q.unsafe('rollback').catch(() => {});
      else await q.unsafe(`close ${cursor}`).catch(() => {});
    }
  }
}
