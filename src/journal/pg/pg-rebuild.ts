// Every whole rebuild of a journal's derived rows on PostgreSQL (index rows with the activity tally, term rows with
// their counts) in bounded memory: a write that finds them untrusted (an upgrade that changed the binding's names, a
// hand edit, a dropped table), `journal check --repair`, a compaction's rewrite, and `journal copy`'s restore. The
// rows are read in key order and each run of entities is folded on its own and its rows written, so that memory
// stays flat in the number of entities, where a whole fold of a million sessions held them all (2.9 GB at 1M).
//
// The rows it writes are a whole fold's: an entity's state depends only on its own records (what a read by key
// relies on too), and a first pass in line order verifies the chain as a whole fold does (ChainVerifier), holding
// only what it finds out of the ordinary: the lines a whole fold leaves out (damage, a batch never completed, a bad
// payload), and the rows whose `key` or `resets` column is not what their record says (written by hand), which it
// sets right (crux's own write: the journal's trigger lets it be), so that the pass by key, and every read by key
// once the rows are trusted again, finds each entity's rows. A caller that knows every row folds and every column is
// crux's own (a restore whose lines `journal copy` verified) leaves that pass out.
import { decodeRecord, type JournalRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import { ChainVerifier, SNAPSHOT_EVENT } from '../codec/verify';
import { testHook } from '../../shared/test-hooks';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { bindIndexRows, bindRows, insertIndexRows, keepsIndexRows } from './pg-index';
import { eachPage } from './pg-pages';
import { insertTermRows } from './pg-terms';
import { addTallyRows, TallyCounts } from './pg-tally';
import { rowPosition } from './pg-fold';
import { arrayLiteral, countsTable, indexTable, journalTable, termsTable, type Catalog } from './schema';

/** Entities folded and written per round (CRUX_TEST_KEYS_PER_ROUND: fewer, so that tests span rounds with a few). */
const KEYS_PER_ROUND = 2000;
const keysPerRound = (): number => Number(testHook('CRUX_TEST_KEYS_PER_ROUND')) || KEYS_PER_ROUND;
/**
 * Rows read per page: small enough that what a page leaves behind is collected young (journal copy's peak);
 * CRUX_TEST_FETCH_ROWS, the paged reads' own hook, makes it smaller still.
 */
const PAGE_ROWS = 1000;
const pageRows = (): number => Math.min(PAGE_ROWS, Number(testHook('CRUX_TEST_FETCH_ROWS')) || PAGE_ROWS);

/** What the verifying pass found: the lines a whole fold does not fold. */
interface Exceptions {
  readonly skip: ReadonlySet<number>;
}

const NONE: Exceptions = { skip: new Set() };

/** A row's `key` and `resets` columns as crux writes them for `record` (pg-transaction.ts insertLines). */
function columnsOf(spec: StoreSpec<unknown>, record: JournalRecord): { key: string | null; resets: boolean } {
  const key = record.ev === SNAPSHOT_EVENT ? undefined : spec.keyOf?.(record);
  return { key: key ?? null, resets: key !== undefined && spec.resets?.(record) === true };
}

/**
 * The journal's rows in line order, verified as a whole fold verifies them (the chain, sequence, batches, vocabulary),
 * nothing of them held but the lines of a batch still open and what is out of the ordinary; the columns of the rows
 * whose record says otherwise are set right once the pass is over (a page of rows a statement).
 */
async function verifyRows(sql: Sql, table: string, spec: StoreSpec<unknown>, tally: TallyCounts | undefined): Promise<Exceptions> {
  const skip = new Set<number>();
  const wrong: { line: number; key: string | null; resets: boolean }[] = [];
  // Lines visited since the last one folded: folds come in line order, so each line passed over is one left out.
  let pending: number[] = [];
  let next = 0;
  const folded = (line: number) => {
    while (next < pending.length && pending[next] !== line) skip.add(pending[next++]!);
    next += 1;
    if (next >= pending.length) [pending, next] = [[], 0];
  };
  let column: { key: string | null; resets: boolean } = { key: null, resets: false };
  // The key the row has once set right: its record's (the verifier hands on each record it does not refuse), else its own.
  let keyed: string | null = null;
  const chain = new ChainVerifier<number>(spec.vocabulary, folded, undefined, false, (record, at) => {
    const own = columnsOf(spec, record);
    if (own.key !== column.key || own.resets !== column.resets) wrong.push({ line: at.line, ...own });
    keyed = own.key;
    return at.line;
  });
  await eachPage(sql, `select line, body, key, resets from ${table} order by line`, [], true, (rows) => {
    for (const [line, body, key, resets] of rows as [string, string, string | null, boolean][]) {
      const at = rowPosition(Number(line), body);
      pending.push(at.line);
      column = { key, resets };
      keyed = key;
      chain.visit(body, at);
      // The tally of the rows the pass by key will not read (few: snapshots), counted as `journal check` counts.
      if (tally !== undefined && keyed === null) countRow(tally, spec, body);
    }
  });
  chain.finish();
  for (let i = next; i < pending.length; i++) skip.add(pending[i]!);
  for (let i = 0; i < wrong.length; i += PAGE_ROWS) {
    const some = wrong.slice(i, i + PAGE_ROWS);
    await sql.unsafe(
      `update ${table} t set key = u.key, resets = u.resets from unnest($1::bigint[], $2::text[], $3::boolean[]) as u(line, key, resets) where t.line = u.line`,
      [arrayLiteral(some.map((w) => w.line)), arrayLiteral(some.map((w) => w.key)), arrayLiteral(some.map((w) => w.resets))],
    );
  }
  return { skip };
}

/**
 * Replaces every index and term row of `spec`'s journal (inside the caller's locked transaction) from its rows, one run of
 * entities at a time. Set-wise: every old row goes in one statement first, each run's rows (and what they count) are
 * only appended (no run deletes rows by key, takes their counts away or binds: work for rows that are not there), the
 * tally counted from every row as `journal check` counts it (pg-tally.ts countJournal), and the rows are bound,
 * trusted, once at the end. Every statement stays short (a run's rows, a page): the client's bound on a statement's
 * answer (client.ts) holds at any size, where one statement over every row would not. `verified`: every row folds and
 * its key is crux's (the verifying pass is left out). `parts`: which rows (both by default; a write rebuilds only those
 * it does not trust).
 * Returns the journal's live bytes as `recount` (pg-autocompact.ts) counts them (each entity's largest row since
 * its last reset), from the same pass; undefined for a journal without derived rows.
 */
export async function reindexByKey<S>(
  store: PgHost,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<S>,
  opts: { verified?: boolean; parts?: { index: boolean; terms: boolean } } = {},
): Promise<number | undefined> {
  const parts = opts.parts ?? { index: true, terms: true };
  if (spec.keyOf === undefined || (!(keepsIndexRows(spec) && parts.index) && !(spec.terms !== undefined && parts.terms))) return undefined;
  const any = spec as StoreSpec<unknown>;
  const ident = store.ident;
  const table = ident(journalTable(spec.file));
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  const bound = { line, h: line === 0 ? '' : head.h };
  const index = !keepsIndexRows(spec) || !parts.index ? undefined : ident(indexTable(journalTable(spec.file)));
  const terms = spec.terms === undefined || !parts.terms ? undefined : ident(termsTable(journalTable(spec.file)));
  const counted = terms === undefined ? undefined : spec.terms?.counted;
  const counts = counted === undefined ? undefined : { table: ident(countsTable(journalTable(spec.file))), counted };
  const tally = index === undefined || spec.tally === undefined ? undefined : new TallyCounts(any);
  const verifying = opts.verified !== true && catalog.tables.has(journalTable(spec.file));
  const odd = verifying ? await verifyRows(sql, table, any, tally) : NONE;
  for (const t of [index, terms, counts?.table]) if (t !== undefined) await sql.unsafe(`delete from ${t}`);
  const perRound = keysPerRound();
  let state = spec.initial();
  let keys: string[] = [];
  const flush = async () => {
    if (index !== undefined) await insertIndexRows(sql, index, spec, state, keys);
    if (terms !== undefined) await insertTermRows(sql, terms, spec, state, keys, counts);
    state = spec.initial();
    keys = [];
  };
  // Every row that decodes is counted (the tally, as `journal check` counts it); only those a whole fold folds evolve.
  const fold = (body: string, at: number) => {
    const decoded = decodeRecord(body, VERIFY_ALL);
    if (!decoded.ok || !spec.vocabulary.has(decoded.record.ev)) return;
    tally?.add(decoded.record);
    if (!odd.skip.has(at)) spec.evolve(state, decoded.record, rowPosition(at, body));
  };
  let live = 0;
  let largest = 0;
  let current: string | undefined;
  // Pages by (key, line), not a cursor: a round's writes cannot run on the connection while a cursor holds it.
  const page = pageRows();
  let after: [string, number] | undefined;
  for (;;) {
    const from = after === undefined ? '' : 'and (key, line) > ($1, $2)';
    const rows: { key: string; line: string; body: string; resets: boolean; bytes: number }[] = await sql.unsafe(
      `select key, line, body, resets, octet_length(body) as bytes from ${table} where key is not null ${from} order by key, line limit ${page}`,
      after ?? [],
    );
    for (const { key, line: at, body, resets, bytes } of rows) {
      if (key !== current) {
        current = key;
        if (keys.length >= perRound) await flush();
        keys.push(key);
        live += largest;
        largest = 0;
      }
      if (resets) largest = 0;
      largest = Math.max(largest, Number(bytes));
      fold(body, Number(at));
    }
    if (rows.length < page) break;
    const last = rows.at(-1)!;
    after = [last.key, Number(last.line)];
  }
  await flush();
  // The tally counts every row that decodes, as `journal check` does: those without a key too (few: snapshots),
  // which the verifying pass counted, or else one read of them.
  if (tally !== undefined) {
    if (!verifying) {
      await eachPage(sql, `select line, body from ${table} where key is null order by line`, [], true, (rows) => {
        for (const [, body] of rows as [string, string][]) countRow(tally, any, body);
      });
    }
    await addTallyRows(sql, index!, tally);
  }
  if (index !== undefined) await bindIndexRows(sql, ident, spec, bound, true);
  if (terms !== undefined && spec.terms !== undefined) await bindRows(sql, ident, 'term_indexes', spec.file, { version: spec.terms.version }, bound, true);
  return live + largest;
}

/** Counts a row in the tally when it decodes and its event is the journal's (pg-tally.ts countJournal's rule). */
function countRow(tally: TallyCounts, spec: StoreSpec<unknown>, body: string): void {
  const decoded = decodeRecord(body, VERIFY_ALL);
  if (decoded.ok && spec.vocabulary.has(decoded.record.ev)) tally.add(decoded.record);
}
