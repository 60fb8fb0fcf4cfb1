// The counts over a journal's term rows (TermKeys.counted): `journal_<name>_counts` holds how many live entities,
// by the text of one fact, hold each counted term (those starting with the spec's prefix), hold none of them
// (' without'), and are there at all (' all'). Kept in the transaction that writes the term rows — each write adds
// what its new rows count and takes away what the rows it replaces counted — so that success by tag and a page's
// total cost the counts' rows, not the bank's. Trusted with the term rows (the same binding, `term_indexes`, and the
// same guard on this table: pg-trust.ts).
import type { StoreSpec, TermEntry } from '../codec/store-spec';
import type { TermCounts, TermRowsQuery } from '../codec/term-queries';
import type { Sql } from './client';
import { countsTable, journalTable, termsTable, type Catalog } from './schema';

type Counted = { readonly fact: number; readonly prefix: string };

/** The counted rows of `spec`'s journal, when the spec counts and the table is there and guarded. */
export function countedOf(catalog: Catalog, spec: StoreSpec<unknown>): Counted | undefined {
  const counted = spec.terms?.counted;
  return counted !== undefined && catalog.guarded.has(countsTable(journalTable(spec.file))) ? counted : undefined;
}

/**
 * The entities of the rows `source` (a relation of `terms`, `facts`: a table, or a data-modifying CTE's rows) as
 * (term, value) pairs, one per entity and what it counts: ' all', ' without' (it holds no term starting with `$1`),
 * and each term it holds that starts with `$1`; `value` is the text of its fact `fact`.
 */
function tallied(fact: number, source: string): string {
  const value = `split_part(r.facts, ' ', ${Math.trunc(fact)})`;
  const marked = 'starts_with(m, $1::text)';
  return `select ' all' as term, ${value} as value from ${source} r
      union all select ' without', ${value} from ${source} r where not exists (select 1 from unnest(r.terms) m where ${marked})
      union all select m, ${value} from ${source} r cross join lateral unnest(r.terms) m where ${marked}`;
}

/** The statement that adds to the counts what the rows `source` count (tallied), times `sign`. Counts that reach 0 stay as rows of 0. */
function addCounts(table: string, counted: Counted, source: string, sign: 1 | -1): string {
  return `insert into ${table} as c (term, value, n)
    select term, value, sum(${sign})::bigint from (${tallied(counted.fact, source)}) e group by term, value
    on conflict (term, value) do update set n = c.n + excluded.n`;
}

/** Every count made again from the term rows (a rebuild, after every row was written). */
export async function rebuildCounts(q: Sql, ident: (t: string) => string, spec: StoreSpec<unknown>, terms: string): Promise<void> {
  const counted = spec.terms?.counted;
  if (counted === undefined) return;
  const table = ident(countsTable(journalTable(spec.file)));
  await q.unsafe(`delete from ${table}`);
  await q.unsafe(addCounts(table, counted, terms, 1), [counted.prefix]);
}

/** Deletes the term rows of `keys`, taking away what they counted (one statement). */
export async function deleteCounted(q: Sql, ident: (t: string) => string, spec: StoreSpec<unknown>, terms: string, keys: string): Promise<void> {
  const counted = spec.terms?.counted;
  if (counted === undefined) {
    await q.unsafe(`delete from ${terms} where key = any($1::text[])`, [keys]);
    return;
  }
  const table = ident(countsTable(journalTable(spec.file)));
  await q.unsafe(`with gone as (delete from ${terms} where key = any($2::text[]) returning terms, facts) ${addCounts(table, counted, 'gone', -1)}`, [
    counted.prefix,
    keys,
  ]);
}

/**
 * Inserts term rows (`rows`: their keys, their terms joined by spaces, their facts) and, with `counts` (the counts'
 * table and what it counts), adds what they count (one statement).
 */
export async function insertCounted(
  q: Sql,
  counts: { table: string; counted: Counted } | undefined,
  terms: string,
  rows: [string, string, string],
): Promise<void> {
  const insert = (at: number) =>
    `insert into ${terms} (key, terms, facts) select k, string_to_array(t, ' '), f from unnest($${at}::text[], $${at + 1}::text[], $${at + 2}::text[]) as e(k, t, f)`;
  if (counts === undefined) {
    await q.unsafe(insert(1), rows);
    return;
  }
  await q.unsafe(`with added as (${insert(2)} returning terms, facts) ${addCounts(counts.table, counts.counted, 'added', 1)}`, [
    counts.counted.prefix,
    ...rows,
  ]);
}

/**
 * JournalStore.countTerms: from the counts kept, when they count what is asked (`prefix` and `where`'s fact the
 * counted ones), else over the term rows `terms` (a table), tallied as the counts are kept.
 */
export async function countTerms(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  query: { readonly prefix: string; readonly where: { readonly fact: number; readonly equals: string } },
): Promise<TermCounts> {
  const counted = countedOf(catalog, spec);
  const kept = counted !== undefined && query.prefix === counted.prefix && query.where.fact === counted.fact;
  const rows = kept
    ? await q.unsafe<{ term: string; n: string; m: string }[]>(
        `select term, sum(n) as n, coalesce(sum(n) filter (where value = $1), 0) as m from ${ident(countsTable(journalTable(spec.file)))}
         group by term having sum(n) > 0`,
        [query.where.equals],
      )
    : await q.unsafe<{ term: string; n: string; m: string }[]>(
        `select term, count(*) as n, count(*) filter (where value = $2) as m
         from (${tallied(query.where.fact, ident(termsTable(journalTable(spec.file))))}) e group by term`,
        [query.prefix, query.where.equals],
      );
  const of = (term: string) => {
    const row = rows.find((r) => r.term === term);
    return { entities: Number(row?.n ?? 0), matching: Number(row?.m ?? 0) };
  };
  return {
    all: of(' all'),
    without: of(' without'),
    terms: rows.filter((r) => !r.term.startsWith(' ')).map((r) => ({ term: r.term, entities: Number(r.n), matching: Number(r.m) })),
  };
}

/**
 * A page's total from the counts (JournalStore.readTermRows with `count`): every entity, or those holding one
 * counted term, of any value or one value of the counted fact; undefined for another query (the rows count it).
 * Several terms at once are not counted here: how many entities hold both of two terms does not follow from how many
 * hold each, so the rows holding all of them are counted through the GIN index (the terms' postings, and the rows of
 * the answer) — unless the page was short of its limit, which read the whole answer (termRows).
 */
export async function countedTotal(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<unknown>,
  counted: Counted,
  query: TermRowsQuery,
): Promise<number | undefined> {
  if ((query.prefix ?? '') !== '' || query.among.length > 1) return undefined;
  if (query.where !== undefined && query.where.fact !== counted.fact) return undefined;
  const term = query.among[0] ?? ' all';
  if (query.among.length === 1 && !term.startsWith(counted.prefix)) return undefined;
  const [row] = await q.unsafe<{ n: string | null }[]>(
    `select sum(n) as n from ${ident(countsTable(journalTable(spec.file)))} where term = $1 ${query.where === undefined ? '' : 'and value = $2'}`,
    query.where === undefined ? [term] : [term, query.where.equals],
  );
  return Number(row?.n ?? 0);
}

/**
 * `journal check`'s comparison of the counts with a replay's term rows (`entries`: every live entity's): whether
 * they differ (false when the spec counts nothing or the table is not there).
 */
export async function countsDisagree(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  entries: Iterable<TermEntry>,
): Promise<boolean> {
  const counted = spec.terms?.counted;
  const table = countsTable(journalTable(spec.file));
  if (counted === undefined || !catalog.tables.has(table)) return false;
  const want = new Map<string, number>();
  const add = (term: string, value: string) => want.set(`${term}\u0001${value}`, (want.get(`${term}\u0001${value}`) ?? 0) + 1);
  for (const e of entries) {
    const value = e.facts.split(' ')[counted.fact - 1] ?? '';
    const marked = e.terms.filter((t) => t.startsWith(counted.prefix));
    add(' all', value);
    if (marked.length === 0) add(' without', value);
    for (const t of new Set(marked)) add(t, value);
  }
  const rows = await q.unsafe<{ term: string; value: string; n: string }[]>(`select term, value, n from ${ident(table)} where n <> 0`);
  return rows.length !== want.size || rows.some((r) => want.get(`${r.term}\u0001${r.value}`) !== Number(r.n));
}
