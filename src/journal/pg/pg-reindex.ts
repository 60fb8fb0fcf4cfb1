// A journal's derived rows (index, terms, snapshot) rebuilt: after a write or a rewrite, within its transaction; entity
// by entity (journal copy's restore: the rows read in key order, each run of keys folded on its own and its rows
// written, so that memory stays flat in the number of entities, where a whole fold of a million sessions would hold
// them all); and what `journal check [--repair]` (core/check.ts) adds on PostgreSQL: the derived rows compared with
// the replay the check made, and rebuilt by --repair where they disagree (SPEC §11).
import { decodeRecord, type JournalRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalReport } from '../core/store-boundary';
import type { Sql } from './client';
import type { DerivedTrust, PgHost, PgWriter } from './pg-host';
import { bindIndexRows, bindRows, indexDisagreements, indexOfOtherVersion, insertIndexRows, keepsIndexRows, writeIndexRows } from './pg-index';
import { countDisagreement, insertTermRows, termDisagreements, termsOfOtherVersion, writeTermRows } from './pg-terms';
import { addTallyRows, countJournal, TallyCounts, tallyDisagreements } from './pg-tally';
import { foldSnapshotTail, loadPgSnapshot, rowPosition } from './pg-fold';
import { countsTable, indexTable, journalTable, readCatalog, SCHEMA_VERSION, termsTable, type Catalog } from './schema';

/** Entities folded and written per round. */
const KEYS_PER_ROUND = 2000;
/** Rows read per page: small enough that what a page leaves behind is collected young (journal copy's peak). */
const PAGE_ROWS = 1000;

/**
 * Replaces every index and term row of `spec`'s journal (inside the caller's locked transaction) from its rows, one run of
 * entities at a time: an entity's state depends only on its own records (what a read by key relies on too).
 * Set-wise: every old row goes in one statement first, each run's rows (and what they count) are only appended (no
 * run deletes rows by key, takes their counts away or binds: work for rows that are not there), and the rows are
 * bound, trusted, once at the end. Every statement stays short (a run's rows, a page): the client's bound
 * on a statement's answer (client.ts) holds at any size, where one statement over every row would not.
 * Returns the journal's live bytes as `recount` (pg-autocompact.ts) counts them (each entity's largest row since
 * its last reset), from the same pass; undefined for a journal without derived rows.
 */
export async function reindexByKey<S>(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<number | undefined> {
  if (spec.keyOf === undefined || (!keepsIndexRows(spec) && spec.terms === undefined)) return undefined;
  const ident = store.ident;
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  const bound = { line, h: line === 0 ? '' : head.h };
  const index = !keepsIndexRows(spec) ? undefined : ident(indexTable(journalTable(spec.file)));
  const terms = spec.terms === undefined ? undefined : ident(termsTable(journalTable(spec.file)));
  const counted = spec.terms?.counted;
  const counts = counted === undefined ? undefined : { table: ident(countsTable(journalTable(spec.file))), counted };
  for (const t of [index, terms, counts?.table]) if (t !== undefined) await sql.unsafe(`delete from ${t}`);
  let state = spec.initial();
  let keys: string[] = [];
  const tally = index === undefined || spec.tally === undefined ? undefined : new TallyCounts(spec as StoreSpec<unknown>);
  const flush = async () => {
    if (index !== undefined) await insertIndexRows(sql, index, spec, state, keys);
    if (terms !== undefined) await insertTermRows(sql, terms, spec, state, keys, counts);
    state = spec.initial();
    keys = [];
  };
  let live = 0;
  let largest = 0;
  // Pages by (key, line), not a cursor: a round's writes cannot run on the connection while a cursor holds it.
  const table = store.ident(journalTable(spec.file));
  let after: [string, number] | undefined;
  for (;;) {
    const rows: { key: string; line: string; body: string; resets: boolean; bytes: number }[] =
      after === undefined
        ? await sql.unsafe(
            `select key, line, body, resets, octet_length(body) as bytes from ${table} where key is not null order by key, line limit ${PAGE_ROWS}`,
          )
        : await sql.unsafe(
            `select key, line, body, resets, octet_length(body) as bytes from ${table} where key is not null and (key, line) > ($1, $2) order by key, line limit ${PAGE_ROWS}`,
            after,
          );
    for (const { key, line: at, body, resets, bytes } of rows) {
      if (key !== keys.at(-1)) {
        if (keys.length >= KEYS_PER_ROUND) await flush();
        keys.push(key);
        live += largest;
        largest = 0;
      }
      if (resets) largest = 0;
      largest = Math.max(largest, Number(bytes));
      const decoded = decodeRecord(body, VERIFY_ALL);
      if (!decoded.ok || !spec.vocabulary.has(decoded.record.ev)) continue;
      spec.evolve(state, decoded.record, rowPosition(Number(at), body));
      tally?.add(decoded.record);
    }
    if (rows.length < PAGE_ROWS) break;
    const last = rows.at(-1)!;
    after = [last.key, Number(last.line)];
  }
  await flush();
  if (tally !== undefined) await addTallyRows(sql, index!, tally);
  if (index !== undefined) await bindIndexRows(sql, ident, spec, bound, true);
  if (spec.terms !== undefined) await bindRows(sql, ident, 'term_indexes', spec.file, { version: spec.terms.version }, bound, true);
  return live + largest;
}

/** `records`: a write's own (their tally counts are added where the index rows are maintained). */
export type RefreshOpts<S> = { trusted?: DerivedTrust; whole?: S; records?: readonly JournalRecord[] };

/**
 * Brings the derived rows of a journal up to date inside a locked transaction, after its rows changed: those of
 * the entities `keys` (from their rows as they now are) where the rows were trusted before the change
 * (`trusted`), else — or with 'all' — every entity's (from `whole`, or a fold of the journal): rebuilt in the
 * same transaction. Returns whether the journal has derived rows (then they can be trusted again).
 */
export async function refreshDerived<S>(
  store: PgWriter,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<S>,
  keys: readonly string[] | 'all',
  opts: RefreshOpts<S>,
): Promise<boolean> {
  if (spec.keyOf === undefined || (!keepsIndexRows(spec) && spec.terms === undefined)) return false;
  // The derived tables and their triggers, made again if they went (a repair after a table or trigger was
  // dropped), in a schema at this crux's version (a repair is a write: it migrates an older one).
  const current = catalog.version < SCHEMA_VERSION ? await readCatalog(sql, store.url.schema) : catalog;
  catalog = await store.prepare(sql, current, spec.file);
  const ident = store.ident;
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  const bound = { line, h: line === 0 ? '' : head.h };
  const none = { index: false, terms: false };
  const trusted = keys === 'all' ? none : (opts.trusted ?? none);
  const maintain = { index: keepsIndexRows(spec) && trusted.index, terms: spec.terms !== undefined && trusted.terms };
  const rebuild = { index: keepsIndexRows(spec) && !trusted.index, terms: spec.terms !== undefined && !trusted.terms };
  if (keys !== 'all' && (maintain.index || maintain.terms)) {
    // Only the entities this write touched (none: the bindings just follow the head).
    const some = keys.length === 0 ? spec.initial() : (await store.foldKeys(sql, catalog, spec, keys)).state;
    if (maintain.index) await writeIndexRows(sql, ident, spec, some, keys, false, bound);
    if (maintain.index && spec.tally !== undefined && opts.records !== undefined) {
      const counts = new TallyCounts(spec as StoreSpec<unknown>);
      for (const record of opts.records) counts.add(record);
      await addTallyRows(sql, ident(indexTable(journalTable(spec.file))), counts);
    }
    if (maintain.terms) await writeTermRows(sql, ident, spec, some, keys, bound);
  }
  if (rebuild.index || rebuild.terms) {
    const state = opts.whole ?? (await store.fold(sql, catalog, spec, { quiet: true })).state;
    if (rebuild.index) {
      const rows = await sql.unsafe<{ key: string }[]>(`select distinct key from ${ident(journalTable(spec.file))} where key is not null`);
      const all = rows.map((r) => r.key);
      await writeIndexRows(sql, ident, spec, state, all, true, bound);
    }
    if (rebuild.terms) await writeTermRows(sql, ident, spec, state, 'all', bound);
  }
  return true;
}

/**
 * A journal's derived rows (index, terms, snapshot) compared with a replay made by `journal check` (`replay`: the
 * journal folded whole, `keys` its entities): how they disagree, rebuilt with `repair`. Rows that agree but lost
 * their trust (written by hand, then put back) are trusted again on repair, so that reads take the indexed path.
 */
export async function checkDerivedRows<S>(
  store: PgHost,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<S>,
  replay: { state: S; keys: ReadonlySet<string> },
  repair: boolean,
): Promise<JournalReport['derived']> {
  const problems = await derivedDisagreements(store, sql, catalog, spec, replay.state, replay.keys);
  if (problems.length > 0) {
    if (!repair) return { problems };
    await store.refreshIndex(sql, catalog, spec, 'all', { whole: replay.state });
    if (catalog.tables.has('snapshots')) await sql.unsafe(`delete from ${store.ident('snapshots')} where journal = $1`, [spec.file]);
    return { problems, rebuilt: true };
  }
  if (repair && catalog.tables.has(journalTable(spec.file))) {
    const trust = await store.derivedTrusted(sql, catalog, spec);
    if ((keepsIndexRows(spec) && !trust.index) || (spec.terms !== undefined && !trust.terms)) {
      await store.refreshIndex(sql, catalog, spec, 'all', { whole: replay.state });
    }
  }
  return undefined;
}

/** "3 entities ("a", "b", "c")", the first five named. */
function entities(keys: readonly string[]): string {
  const shown = keys
    .slice(0, 5)
    .map((k) => JSON.stringify(k))
    .join(', ');
  return `${keys.length} entit${keys.length === 1 ? 'y' : 'ies'} (${shown}${keys.length > 5 ? ', …' : ''})`;
}

/** How the derived rows of a journal disagree with a replay (`state`, the journal folded whole): one line each. */
async function derivedDisagreements<S>(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<S>, state: S, keys: ReadonlySet<string>): Promise<string[]> {
  const problems: string[] = [];
  const ident = store.ident;
  if (keepsIndexRows(spec) && catalog.tables.has(journalTable(spec.file)) && !(await indexOfOtherVersion(sql, ident, catalog, spec as StoreSpec<unknown>))) {
    const wrong = await indexDisagreements(sql, ident, catalog, spec, state, keys);
    if (wrong.length > 0) problems.push(`${indexTable(journalTable(spec.file))} disagrees with a replay for ${entities(wrong)}`);
    if (spec.tally !== undefined && catalog.tables.has(indexTable(journalTable(spec.file)))) {
      const counts = await countJournal(sql, ident(journalTable(spec.file)), spec as StoreSpec<unknown>);
      const hours = await tallyDisagreements(sql, ident(indexTable(journalTable(spec.file))), counts);
      if (hours.length > 0)
        problems.push(`${indexTable(journalTable(spec.file))} disagrees with a replay in its activity counts (${hours.length} hour·series)`);
    }
  }
  if (
    spec.terms !== undefined &&
    catalog.tables.has(journalTable(spec.file)) &&
    !(await termsOfOtherVersion(sql, ident, catalog, spec as StoreSpec<unknown>))
  ) {
    const wrong = await termDisagreements(sql, ident, catalog, spec, state);
    if (wrong.length > 0) problems.push(`${termsTable(journalTable(spec.file))} disagrees with a replay for ${entities(wrong)}`);
    if (await countDisagreement(sql, ident, catalog, spec, state)) problems.push(`${countsTable(journalTable(spec.file))} disagrees with a replay`);
  }
  if (spec.snapshot !== undefined) {
    // A snapshot that verifies (its row, its digest) and folds forward to another state than the replay's.
    const snapshot = await loadPgSnapshot(sql, ident, catalog, spec, { unguarded: true });
    if (snapshot !== undefined) {
      await foldSnapshotTail(sql, ident, spec, snapshot, true);
      if (!Buffer.from(spec.snapshot.encode(snapshot.state)).equals(Buffer.from(spec.snapshot.encode(state)))) {
        problems.push(`the snapshot row of ${spec.file} (taken at line ${snapshot.line}) disagrees with a replay`);
      }
    }
  }
  return problems;
}
