// What `journal check [--repair]` (core/check.ts) adds on PostgreSQL: the derived rows (index, terms, snapshot)
// compared with the replay the check made, and rebuilt by --repair where they disagree (SPEC §11).
import type { StoreSpec } from '../codec/store-spec';
import type { JournalReport } from '../core/store-boundary';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { indexDisagreements, indexOfOtherVersion } from './pg-index';
import { countDisagreement, termDisagreements, termsOfOtherVersion } from './pg-terms';
import { foldSnapshotTail, loadPgSnapshot } from './pg-fold';
import { countsTable, indexTable, journalTable, termsTable, type Catalog } from './schema';

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
    if ((spec.secondary !== undefined && !trust.index) || (spec.terms !== undefined && !trust.terms)) {
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
  if (
    spec.secondary !== undefined &&
    catalog.tables.has(journalTable(spec.file)) &&
    !(await indexOfOtherVersion(sql, ident, catalog, spec as StoreSpec<unknown>))
  ) {
    const wrong = await indexDisagreements(sql, ident, catalog, spec, state, keys);
    if (wrong.length > 0) problems.push(`${indexTable(journalTable(spec.file))} disagrees with a replay for ${entities(wrong)}`);
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
      await foldSnapshotTail(sql, ident, spec, snapshot);
      if (!Buffer.from(spec.snapshot.encode(snapshot.state)).equals(Buffer.from(spec.snapshot.encode(state)))) {
        problems.push(`the snapshot row of ${spec.file} (taken at line ${snapshot.line}) disagrees with a replay`);
      }
    }
  }
  return problems;
}
