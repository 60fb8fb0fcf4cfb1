// The activity tally (StoreSpec.tally) on PostgreSQL: the records counted per hour and series, kept as rows of the
// journal's index table (`journal_<name>_index`) under a key no entity has (the empty text), named by hour and
// series (`0000493920.2`), the count in `num_value`. Each write adds its records' counts in its transaction
// (pg-reindex.ts refreshDerived, where the index rows are trusted); a rebuild of the index counts the journal again.
// They are the index's rows: bound and trusted with them (secondary_indexes, pg-index.ts boundCurrent; the binding's
// names carry TALLY_NAME, so a crux that does not keep them rebuilds the index rather than trust it), guarded by its
// triggers, and compared with a replay by `journal check`. A read of a window costs its hours, not its records.
import { decodeRecord, type JournalRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { Sql } from './client';
import { eachPage } from './pg-pages';

/** The key of the tally's rows: no entity's (ids are never empty). */
const TALLY_KEY = '';
/**
 * The tally's rows, as a condition: of its key and named by hour and series, so that an entity of the empty key (a
 * record written by hand) has its secondary rows kept and compared as any entity's, and never counts.
 */
export const TALLY_ROWS = `(key = '' and name ~ '^[0-9]{10}[.][0-9]+$')`;
/** What the binding's names end with when the index keeps the tally. */
export const TALLY_NAME = '#tally';
const HOUR_MS = 3_600_000;

const hourName = (hour: number): string => String(hour).padStart(10, '0');

/** Counts by row name (`<hour>.<series>`): what the tally rows of these records add. */
export class TallyCounts {
  readonly byName = new Map<string, number>();

  constructor(private readonly spec: StoreSpec<unknown>) {}

  /** A record counted by its time, in the series the store's rule gives it (derived/entries.ts tallyEntry's rule). */
  add(record: JournalRecord): void {
    const series = this.spec.tally?.of(record);
    if (series === undefined) return;
    const hour = Math.floor(Date.parse(record.ts) / HOUR_MS);
    if (!(hour >= 0)) return;
    const name = `${hourName(hour)}.${series}`;
    this.byName.set(name, (this.byName.get(name) ?? 0) + 1);
  }
}

/** Adds `counts` to the tally rows of `table` (an index table). */
export async function addTallyRows(q: Sql, table: string, counts: TallyCounts): Promise<void> {
  if (counts.byName.size === 0) return;
  const names = [...counts.byName.keys()];
  await q.unsafe(
    `insert into ${table} as t (key, name, num_value) select $1, n, c from unnest($2::text[], $3::bigint[]) as u(n, c)
     on conflict (key, name) do update set num_value = t.num_value + excluded.num_value`,
    [TALLY_KEY, `{${names.join(',')}}`, `{${names.map((n) => counts.byName.get(n)).join(',')}}`],
  );
}

/** The counts of every record of `spec`'s journal table, read a page at a time in the caller's transaction (pg-pages.ts). */
export async function countJournal(q: Sql, journal: string, spec: StoreSpec<unknown>): Promise<TallyCounts> {
  const counts = new TallyCounts(spec);
  await eachPage(q, `select body from ${journal}`, [], true, (rows) => {
    for (const [body] of rows as [string][]) {
      const decoded = decodeRecord(body, VERIFY_ALL);
      if (decoded.ok && spec.vocabulary.has(decoded.record.ev)) counts.add(decoded.record);
    }
  });
  return counts;
}

/** The counts of the hours `from` to `to`, `[hour - from][series]`, from the tally rows of `table`. */
export async function readTallyRows(q: Sql, table: string, from: number, to: number, series: number): Promise<number[][]> {
  const counts = Array.from({ length: Math.max(0, to - from + 1) }, () => new Array<number>(series).fill(0));
  const rows = await q.unsafe<{ name: string; n: string }[]>(`select name, num_value as n from ${table} where key = $1 and name >= $2 and name < $3`, [
    TALLY_KEY,
    hourName(from),
    hourName(to + 1),
  ]);
  for (const { name, n } of rows) {
    const [hour, s] = name.split('.').map(Number) as [number, number];
    const row = counts[hour - from];
    if (row !== undefined && s < series) row[s]! += Number(n);
  }
  return counts;
}

/** The tally rows of `table` as `counts` should make them: the names that differ (none when they agree). */
export async function tallyDisagreements(q: Sql, table: string, counts: TallyCounts): Promise<string[]> {
  const rows = await q.unsafe<{ name: string; n: string }[]>(`select name, num_value as n from ${table} where ${TALLY_ROWS}`);
  const wrong: string[] = [];
  const seen = new Set<string>();
  for (const { name, n } of rows) {
    seen.add(name);
    if (counts.byName.get(name) !== Number(n)) wrong.push(name);
  }
  for (const name of counts.byName.keys()) if (!seen.has(name)) wrong.push(name);
  return wrong.sort();
}
