// A journal's secondary keys (StoreSpec.secondary) as rows the database indexes: `journal_<name>_index` holds
// each entity's current value of each name, recomputed from its folded state by every write that touches it, so
// that `session list --agent`, `--stranded` and `reap` read only the entities that may match.
//
// Derived state (SPEC §3, §11): never trusted unverified. `secondary_indexes` binds the rows to the journal's
// head (the line and hash of its last row, as a cache file names its journal's head) and carries the count and
// the sum of a hash of every row, kept up to date by each write in its own transaction. A read trusts the rows
// only when the binding names the head the journal has and the rows still add up to the count and the sum: a row
// deleted, added or edited (one wrong `num_value`) fails it, and the read folds the whole journal instead (the
// same answer, slower) until a write or `journal check --repair` rebuilds them.
import { SNAPSHOT_EVENT } from '../verify';
import type { JournalRecord } from '../record';
import type { IndexQuery, StoreSpec } from '../store-spec';
import type { Sql } from './client';
import { arrayLiteral, indexTable, journalTable, type Catalog } from './schema';

const signature = (spec: StoreSpec<unknown>) => spec.secondary!.names.join(',');

/** Each index row's hash, in SQL: what the binding's count and sum add up. */
const ROW_HASH = `hashtextextended(key || chr(1) || name || chr(1) || coalesce(text_value, chr(2)) || chr(1) || coalesce(num_value::text, chr(2)), 0)`;

/** The row of a journal the index rows follow. */
export interface IndexHead {
  readonly line: number;
  readonly h: string;
}

/**
 * Whether the index rows of `spec`'s journal can be trusted: they follow the spec's names and version, are bound
 * to the journal's current head, and (`full`) add up to the binding's count and sum. One statement; the full
 * check reads every index row of the journal, the price of never answering from damaged rows. A write that only
 * maintains the rows of the entities it touches asks without `full`: it answers nothing from them, and rows
 * damaged before stay detectable (their count and sum stay off by what the damage changed).
 */
export async function indexCurrent(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>, full = true): Promise<boolean> {
  if (spec.secondary === undefined || !catalog.tables.has('secondary_indexes') || !catalog.tables.has(journalTable(spec.file))) return false;
  const journal = ident(journalTable(spec.file));
  const index = ident(indexTable(journalTable(spec.file)));
  const [row] = await q.unsafe<{ ok: boolean }[]>(
    `select b.version = $2 and b.names = $3 and b.line = coalesce(hd.line, 0) and b.h = coalesce(hd.h, '')
        ${full ? 'and b.rows = agg.n and b.sum = agg.s' : ''} as ok
     from ${ident('secondary_indexes')} b
       left join lateral (select line, h from ${journal} order by line desc limit 1) hd on true
       ${full ? `cross join lateral (select count(*) as n, coalesce(sum(${ROW_HASH}), 0) as s from ${index}) agg` : ''}
     where b.journal = $1`,
    [spec.file, spec.secondary.version, signature(spec)],
  );
  return row?.ok === true;
}

/** The keys of the entities whose value of `query.index` matches (possibly more, never fewer). */
export async function matchingKeys(q: Sql, ident: (t: string) => string, spec: StoreSpec<unknown>, query: IndexQuery): Promise<string[]> {
  const table = ident(indexTable(journalTable(spec.file)));
  const rows =
    'equals' in query
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

/** The index rows `state` gives the entities `keys`: what the table holds for them when it is right. */
function expectedRows<S>(spec: StoreSpec<S>, state: S, keys: Iterable<string>): { key: string; name: string; text: string | null; num: number | null }[] {
  const secondary = spec.secondary;
  const out: { key: string; name: string; text: string | null; num: number | null }[] = [];
  if (secondary === undefined) return out;
  for (const key of keys) {
    const values = secondary.values(state, key);
    secondary.names.forEach((name, i) => {
      const value = values[i];
      if (value === undefined) return;
      out.push({ key, name, text: typeof value === 'string' ? value : null, num: typeof value === 'number' ? value : null });
    });
  }
  return out;
}

/**
 * Writes the index rows of `keys` from `state` (which holds those entities as they now are): their old rows
 * go, their current values come in, and the binding follows (count and sum adjusted by what went and came, bound
 * to `head`, the journal's last row after this write). With `all`, every row of the journal is replaced and the
 * binding written afresh.
 */
export async function writeIndexRows<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  state: S,
  keys: readonly string[],
  all: boolean,
  head: IndexHead,
): Promise<void> {
  const secondary = spec.secondary;
  if (secondary === undefined) return;
  const table = ident(indexTable(journalTable(spec.file)));
  const [gone] = all
    ? await q.unsafe<{ n: string; s: string }[]>(`with gone as (delete from ${table} returning 1) select count(*) as n, 0 as s from gone`)
    : keys.length > 0
      ? await q.unsafe<{ n: string; s: string }[]>(
          `with gone as (delete from ${table} where key = any($1::text[]) returning ${ROW_HASH} as h) select count(*) as n, coalesce(sum(h), 0) as s from gone`,
          [arrayLiteral(keys)],
        )
      : [{ n: '0', s: '0' }];
  const rows = expectedRows(spec, state, keys);
  let came = { n: '0', s: '0' };
  if (rows.length > 0) {
    const inserted = await q.unsafe<{ n: string; s: string }[]>(
      `with came as (insert into ${table} (key, name, text_value, num_value)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) returning ${ROW_HASH} as h)
       select count(*) as n, coalesce(sum(h), 0) as s from came`,
      [
        arrayLiteral(rows.map((r) => r.key)),
        arrayLiteral(rows.map((r) => r.name)),
        arrayLiteral(rows.map((r) => r.text)),
        arrayLiteral(rows.map((r) => r.num)),
      ],
    );
    came = inserted[0]!;
  }
  const binding = ident('secondary_indexes');
  if (all) {
    await q.unsafe(
      `insert into ${binding} (journal, version, names, line, h, rows, sum) values ($1, $2, $3, $4, $5, $6, $7::numeric)
       on conflict (journal) do update set version = excluded.version, names = excluded.names, line = excluded.line, h = excluded.h, rows = excluded.rows, sum = excluded.sum`,
      [spec.file, secondary.version, signature(spec), head.line, head.h, came.n, came.s],
    );
  } else {
    await q.unsafe(`update ${binding} set line = $2, h = $3, rows = rows - $4 + $5, sum = sum - $6::numeric + $7::numeric where journal = $1`, [
      spec.file,
      head.line,
      head.h,
      gone!.n,
      came.n,
      gone!.s,
      came.s,
    ]);
  }
}

/**
 * `journal check`'s comparison: the entities whose index rows differ from what a replay gives (`state` holds the
 * whole journal folded), sorted; empty when the rows are right.
 */
export async function indexDisagreements<S>(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<S>,
  state: S,
  keys: Iterable<string>,
): Promise<string[]> {
  if (spec.secondary === undefined) return [];
  const want = new Map<string, string>();
  for (const r of expectedRows(spec, state, keys)) want.set(`${r.key}\u0001${r.name}`, `${r.text}\u0001${r.num}`);
  const table = indexTable(journalTable(spec.file));
  const have = new Map<string, string>();
  if (catalog.tables.has(table)) {
    const rows = await q.unsafe<{ key: string; name: string; text_value: string | null; num_value: string | null }[]>(
      `select key, name, text_value, num_value from ${ident(table)}`,
    );
    for (const r of rows) have.set(`${r.key}\u0001${r.name}`, `${r.text_value}\u0001${r.num_value === null ? null : Number(r.num_value)}`);
  }
  const wrong = new Set<string>();
  for (const [k, v] of want) if (have.get(k) !== v) wrong.add(k.split('\u0001')[0]!);
  for (const k of have.keys()) if (!want.has(k)) wrong.add(k.split('\u0001')[0]!);
  return [...wrong].sort();
}
