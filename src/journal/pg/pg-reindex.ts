// A journal's derived rows (index, terms, snapshot) brought up to date after a write or a rewrite, within its
// transaction: by key where they were trusted, else rebuilt entity by entity (pg-rebuild.ts); and what `journal check
// [--repair]` (core/check.ts) adds on PostgreSQL: the derived rows compared with the replay the check made, and rebuilt
// by --repair where they disagree (SPEC §11).
import type { JournalRecord } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalReport } from '../core/store-boundary';
import type { Sql } from './client';
import type { DerivedTrust, PgHost, PgWriter } from './pg-host';
import { indexDisagreements, indexOfOtherVersion, keepsIndexRows, writeIndexRows } from './pg-index';
import { countDisagreement, termDisagreements, termsOfOtherVersion, writeTermRows } from './pg-terms';
import { addTallyRows, countJournal, TallyCounts, tallyDisagreements } from './pg-tally';
import { foldSnapshotTail, loadPgSnapshot } from './pg-fold';
import { reindexByKey } from './pg-rebuild';
import { countsTable, indexTable, journalTable, readCatalog, SCHEMA_VERSION, termsTable, type Catalog } from './schema';

/** `records`: a write's own (their tally counts are added where the index rows are maintained). */
export type RefreshOpts = { trusted?: DerivedTrust; records?: readonly JournalRecord[] };

/**
 * Brings the derived rows of a journal up to date inside a locked transaction, after its rows changed: those of
 * the entities `keys` (from their rows as they now are) where the rows were trusted before the change (`trusted`),
 * else — or with 'all' — every entity's, rebuilt in the same transaction entity by entity (pg-rebuild.ts: bounded
 * memory at any size). Returns whether the journal has derived rows (then they can be trusted again).
 */
export async function refreshDerived<S>(
  store: PgWriter,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<S>,
  keys: readonly string[] | 'all',
  opts: RefreshOpts,
): Promise<boolean> {
  if (spec.keyOf === undefined || (!keepsIndexRows(spec) && spec.terms === undefined)) return false;
  // The derived tables and their triggers, made again if they went (a repair after a table or trigger was
  // dropped), in a schema at this crux's version (a repair is a write: it migrates an older one).
  const current = catalog.version < SCHEMA_VERSION ? await readCatalog(sql, store.url.schema) : catalog;
  catalog = await store.prepare(sql, current, spec.file);
  const ident = store.ident;
  const none = { index: false, terms: false };
  const trusted = keys === 'all' ? none : (opts.trusted ?? none);
  const untrusted = { index: keepsIndexRows(spec) && !trusted.index, terms: spec.terms !== undefined && !trusted.terms };
  // A part kept by key reads the write's entities by key, which foldKeys believes only with the secondary keys' rows
  // trusted (else it folds the whole journal): without them, every part is rebuilt.
  const rebuild = untrusted.index && spec.secondary !== undefined ? { index: true, terms: true } : untrusted;
  const maintain = { index: keepsIndexRows(spec) && !rebuild.index, terms: spec.terms !== undefined && !rebuild.terms };
  if (keys !== 'all' && (maintain.index || maintain.terms)) {
    const { line, head } = await store.headOf(sql, catalog, spec.file);
    const bound = { line, h: line === 0 ? '' : head.h };
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
  if (rebuild.index || rebuild.terms) await reindexByKey(store, sql, catalog, spec, { parts: rebuild });
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
    await store.refreshIndex(sql, catalog, spec, 'all');
    if (catalog.tables.has('snapshots')) await sql.unsafe(`delete from ${store.ident('snapshots')} where journal = $1`, [spec.file]);
    return { problems, rebuilt: true };
  }
  if (repair && catalog.tables.has(journalTable(spec.file))) {
    const trust = await store.derivedTrusted(sql, catalog, spec);
    if ((keepsIndexRows(spec) && !trust.index) || (spec.terms !== undefined && !trust.terms)) {
      await store.refreshIndex(sql, catalog, spec, 'all');
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
