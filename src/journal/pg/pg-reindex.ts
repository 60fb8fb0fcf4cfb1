// A journal's index and term rows rebuilt entity by entity (journal copy's restore): the rows read in key order through a
// cursor, each run of keys folded on its own and its index rows written, so that memory stays flat in the number
// of entities (a whole fold of a million sessions would hold them all).
import { decodeRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { writeIndexRows } from './pg-index';
import { writeTermRows } from './pg-terms';
import { rowPosition } from './rows';
import { journalTable, type Catalog } from './schema';

/** Entities folded and written per round. */
const KEYS_PER_ROUND = 2000;
/** Rows read per page: small enough that what a page leaves behind is collected young (journal copy's peak). */
const PAGE_ROWS = 1000;

/**
 * Replaces every index and term row of `spec`'s journal (inside the caller's locked transaction) from its rows, one run of
 * entities at a time: an entity's state depends only on its own records (what a read by key relies on too).
 */
export async function reindexByKey<S>(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<void> {
  if (spec.keyOf === undefined || (spec.secondary === undefined && spec.terms === undefined)) return;
  const ident = (t: string) => store.ident(t);
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  const bound = { line, h: line === 0 ? '' : head.h };
  let first = true;
  let state = spec.initial();
  let keys: string[] = [];
  // The first round replaces every row and binds them afresh (trusted); later ones add their entities' rows.
  const flush = async () => {
    if (spec.secondary !== undefined) await writeIndexRows(sql, ident, spec, state, keys, first, bound);
    if (spec.terms !== undefined) await writeTermRows(sql, ident, spec, state, first ? 'all' : keys, bound);
    first = false;
    state = spec.initial();
    keys = [];
  };
  // Pages by (key, line), not a cursor: a round's writes cannot run on the connection while a cursor holds it.
  const table = store.ident(journalTable(spec.file));
  let after: [string, number] | undefined;
  for (;;) {
    const rows: { key: string; line: string; body: string }[] =
      after === undefined
        ? await sql.unsafe(`select key, line, body from ${table} where key is not null order by key, line limit ${PAGE_ROWS}`)
        : await sql.unsafe(
            `select key, line, body from ${table} where key is not null and (key, line) > ($1, $2) order by key, line limit ${PAGE_ROWS}`,
            after,
          );
    for (const { key, line: at, body } of rows) {
      if (key !== keys.at(-1)) {
        if (keys.length >= KEYS_PER_ROUND) await flush();
        keys.push(key);
      }
      const decoded = decodeRecord(body, VERIFY_ALL);
      if (decoded.ok && spec.vocabulary.has(decoded.record.ev)) spec.evolve(state, decoded.record, rowPosition(Number(at), body));
    }
    if (rows.length < PAGE_ROWS) break;
    const last = rows.at(-1)!;
    after = [last.key, Number(last.line)];
  }
  if (first || keys.length > 0) await flush();
}
