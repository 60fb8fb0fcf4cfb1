// A journal's secondary keys (StoreSpec.secondary) as rows the database indexes: `journal_<name>_index` holds
// each entity's current value of each name, recomputed from its folded state by every write that touches it, so
// that `session list --agent`, `--stranded` and `reap` read only the entities that may match.
//
// `secondary_indexes` records which version of the spec's names the rows follow; rows of another version (or
// none, for a journal restored or written before) are rebuilt by the next write, and until then reads fold the
// whole journal: slower, the same answer.
import { SNAPSHOT_EVENT } from '../verify';
import type { JournalRecord } from '../record';
import type { IndexQuery, StoreSpec } from '../store-spec';
import type { Sql } from './client';
import { arrayLiteral, indexTable, journalTable, type Catalog } from './schema';

const signature = (spec: StoreSpec<unknown>) => spec.secondary!.names.join(',');

/** Whether the index rows of `spec`'s journal follow its current names and version. */
export async function indexCurrent(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>): Promise<boolean> {
  if (spec.secondary === undefined || !catalog.tables.has('secondary_indexes') || !catalog.tables.has(journalTable(spec.file))) return false;
  const [row] = await q.unsafe<{ version: number; names: string }[]>(
    `select version, names from ${ident('secondary_indexes')} where journal = $1`,
    [spec.file],
  );
  return row !== undefined && row.version === spec.secondary.version && row.names === signature(spec);
}

/** The keys of the entities whose value of `query.index` matches (possibly more, never fewer). */
export async function matchingKeys(q: Sql, ident: (t: string) => string, spec: StoreSpec<unknown>, query: IndexQuery): Promise<string[]> {
  const table = ident(indexTable(journalTable(spec.file)));
  const rows = 'equals' in query
    ? await q.unsafe<{ key: string }[]>(`select key from ${table} where name = $1 and text_value = $2`, [query.index, query.equals])
    : await q.unsafe<{ key: string }[]>(`select key from ${table} where name = $1 and num_value <= $2`, [query.index, query.atMost]);
  return rows.map((r) => r.key);
}

/** The entity keys a batch of lines touches. */
export function keysOf(spec: StoreSpec<unknown>, records: readonly JournalRecord[]): string[] {
  const keys = new Set<string>();
  for (const record of records) {
    if (record.ev === SNAPSHOT_EVENT) continue;
    const key = spec.keyOf?.(record);
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

/**
 * Writes the index rows of `keys` from `state` (which holds those entities as they now are): their old rows
 * go, their current values come in. With `all`, every row of the journal is replaced and the version recorded.
 */
export async function writeIndexRows<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  state: S,
  keys: readonly string[],
  all: boolean,
): Promise<void> {
  const secondary = spec.secondary;
  if (secondary === undefined) return;
  const table = ident(indexTable(journalTable(spec.file)));
  if (all) await q.unsafe(`delete from ${table}`);
  else if (keys.length > 0) await q.unsafe(`delete from ${table} where key = any($1::text[])`, [arrayLiteral(keys)]);
  const rowKeys: string[] = [];
  const names: string[] = [];
  const texts: (string | null)[] = [];
  const nums: (number | null)[] = [];
  for (const key of keys) {
    const values = secondary.values(state, key);
    secondary.names.forEach((name, i) => {
      const value = values[i];
      if (value === undefined) return;
      rowKeys.push(key);
      names.push(name);
      texts.push(typeof value === 'string' ? value : null);
      nums.push(typeof value === 'number' ? value : null);
    });
  }
  if (rowKeys.length > 0) {
    await q.unsafe(
      `insert into ${table} (key, name, text_value, num_value)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[])`,
      [arrayLiteral(rowKeys), arrayLiteral(names), arrayLiteral(texts), arrayLiteral(nums)],
    );
  }
  if (all) {
    await q.unsafe(
      `insert into ${ident('secondary_indexes')} (journal, version, names) values ($1, $2, $3)
       on conflict (journal) do update set version = excluded.version, names = excluded.names`,
      [spec.file, secondary.version, signature(spec)],
    );
  }
}
