// A journal's terms (StoreSpec.terms) as rows: `journal_<name>_terms` holds each live entity's terms (a GIN index
// over them) and its facts, recomputed from its folded state by every write that touches it, so that `case
// retrieve` reads only the rows of the entities holding one of its terms, never the whole bank.
//
// Derived state, trusted as the index rows are (pg-trust.ts): bound in `term_indexes` to the journal's head and
// trusted only while no one but crux wrote the table; else a retrieve answers from the whole state (readWith).
import type { StoreSpec, TermEntry, TermHit } from '../codec/store-spec';
import type { TermRowsQuery } from '../codec/term-queries';
import type { Sql } from './client';
import { bindRows, boundCurrent, type IndexHead } from './pg-index';
import { countedOf, countedTotal, countsDisagree, deleteCounted, insertCounted, rebuildCounts } from './pg-term-counts';
import { arrayLiteral, countsTable, factNumber, journalTable, termsTable, type Catalog } from './schema';
import { eachPage } from './pg-pages';

/** Entities written per statement. */
const WRITE_ROWS = 5000;

/** Whether the term rows of `spec`'s journal can be trusted (pg-index.ts boundCurrent). */
export async function termsCurrent(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>): Promise<boolean> {
  if (spec.terms === undefined) return false;
  return boundCurrent(q, ident, catalog, { table: termsTable(journalTable(spec.file)), binding: 'term_indexes', file: spec.file, version: spec.terms.version });
}

/** Up to this many terms, which of them a row holds is told as the bits of one integer (faster than an array). */
const MASK_TERMS = 31;

/**
 * The entities holding one of `terms` (and, with `among`, every one of `among`), each with the indexes into
 * `all` of the terms it holds: one statement through the GIN index, in no particular order.
 */
export async function matchTerms(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<unknown>,
  all: readonly string[],
  terms: readonly string[],
  among: readonly string[],
): Promise<TermHit[]> {
  const params: string[] = [arrayLiteral(terms), ...(among.length > 0 ? [arrayLiteral(among)] : [])];
  const masked = all.length <= MASK_TERMS;
  const first = params.length + 1;
  const has = masked
    ? all.map((_, i) => `((r.terms @> array[$${first + i}::text])::int << ${i})`).join(' | ')
    : `array_to_string(array(select i - 1 from unnest($${first}::text[]) with ordinality a(t, i) where a.t = any(r.terms) order by i), ',')`;
  params.push(...(masked ? all : [arrayLiteral(all)]));
  const rows = await q.unsafe<{ key: string; facts: string; has: string | number }[]>(
    `select r.key, r.facts, ${has} as has from ${ident(termsTable(journalTable(spec.file)))} r
     where r.terms && $1::text[] ${among.length > 0 ? 'and r.terms @> $2::text[]' : ''}`,
    params,
  );
  return rows.map((r) => ({
    key: r.key,
    facts: r.facts,
    has: masked ? bitsOf(Number(r.has), all.length) : r.has === '' ? [] : String(r.has).split(',').map(Number),
  }));
}

/** The indexes of the bits set in `mask`, of the first `n`. */
function bitsOf(mask: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) if ((mask >>> i) & 1) out.push(i);
  return out;
}

/**
 * Writes the term rows of `keys` from `state` (which holds those entities as they now are; every live entity with
 * `all`, which replaces every row and binds them afresh, trusted), and binds them to `head`.
 */
export async function writeTermRows<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  state: S,
  keys: readonly string[] | 'all',
  head: IndexHead,
): Promise<void> {
  const terms = spec.terms;
  if (terms === undefined) return;
  const table = ident(termsTable(journalTable(spec.file)));
  const all = keys === 'all';
  const plain = spec as StoreSpec<unknown>;
  const counted = terms.counted;
  // A rebuild writes the rows, then counts them once; a write by key keeps the counts as its rows change.
  if (all) await q.unsafe(`delete from ${table}`);
  else if (keys.length > 0) await deleteCounted(q, ident, plain, table, arrayLiteral(keys));
  const counts = all || counted === undefined ? undefined : { table: ident(countsTable(journalTable(spec.file))), counted };
  await insertTermRows(q, table, spec, state, keys === 'all' ? undefined : keys, counts);
  if (all) await finishTermRows(q, ident, spec, head);
  else await bindRows(q, ident, 'term_indexes', spec.file, { version: terms.version }, head, false);
}

/**
 * Inserts the term rows of `keys` (every live entity's without) from `state` into `table` (which holds none of
 * theirs), adding what they count with `counts`, WRITE_ROWS a statement.
 */
export async function insertTermRows<S>(
  q: Sql,
  table: string,
  spec: StoreSpec<S>,
  state: S,
  keys: readonly string[] | undefined,
  counts?: Parameters<typeof insertCounted>[1],
): Promise<void> {
  let batch: TermEntry[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    // Terms are runs of letters and digits (no space): joined by spaces, split again by the server.
    const rows: [string, string, string] = [
      arrayLiteral(batch.map((e) => e.key)),
      arrayLiteral(batch.map((e) => e.terms.join(' '))),
      arrayLiteral(batch.map((e) => e.facts)),
    ];
    await insertCounted(q, counts, table, rows);
    batch = [];
  };
  for (const entry of spec.terms?.entries(state, keys) ?? []) {
    batch.push(entry);
    if (batch.length === WRITE_ROWS) await flush();
  }
  await flush();
}

/** After every term row of a journal was written afresh: the counts made from them, the rows bound to `head`, trusted. */
async function finishTermRows<S>(q: Sql, ident: (t: string) => string, spec: StoreSpec<S>, head: IndexHead): Promise<void> {
  if (spec.terms === undefined) return;
  await rebuildCounts(q, ident, spec as StoreSpec<unknown>, ident(termsTable(journalTable(spec.file))));
  await bindRows(q, ident, 'term_indexes', spec.file, { version: spec.terms.version }, head, true);
}

/**
 * Whether the term rows follow another version of the terms (an older crux's): stale, not wrong — the next write
 * rebuilds them, and until then reads do without them (`journal check` does not count them as damage).
 */
export async function termsOfOtherVersion(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>): Promise<boolean> {
  if (spec.terms === undefined || !catalog.tables.has('term_indexes')) return false;
  const [row] = await q.unsafe<{ other: boolean }[]>(`select version <> $2 as other from ${ident('term_indexes')} where journal = $1`, [
    spec.file,
    spec.terms.version,
  ]);
  return row?.other === true;
}

/**
 * Whether a journal's term rows were ever written: rows not built yet (a schema just migrated, a table just made)
 * are no disagreement, as a missing cache file is none: reads do without them, and the next write builds them.
 */
async function everBuilt(q: Sql, ident: (t: string) => string, catalog: Catalog, file: string, table: string): Promise<boolean> {
  const bound = catalog.tables.has('term_indexes') ? `exists (select 1 from ${ident('term_indexes')} where journal = $1)` : 'false';
  const [row] = await q.unsafe<{ built: boolean }[]>(`select ${bound} or exists (select 1 from ${ident(table)}) as built`, [file]);
  return row?.built === true;
}

/**
 * `journal check`'s comparison: the entities whose term rows differ from what a replay gives (`state` holds the
 * whole journal folded), sorted; empty when the rows are right.
 */
export async function termDisagreements<S>(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<S>, state: S): Promise<string[]> {
  if (spec.terms === undefined) return [];
  const table = termsTable(journalTable(spec.file));
  if (!catalog.tables.has(table) || !(await everBuilt(q, ident, catalog, spec.file, table))) return [];
  const want = new Map<string, string>();
  for (const e of spec.terms.entries(state)) want.set(e.key, `${e.terms.join(' ')}\u0001${e.facts}`);
  const wrong = new Set<string>();
  const seen = new Set<string>();
  // In the check's transaction (its lock): a page at a time, each page a statement of it (pg-fold.ts eachPage).
  await eachPage(q, `select key, array_to_string(terms, ' ') as terms, facts from ${ident(table)}`, [], true, (rows) => {
    for (const [key, terms, facts] of rows as [string, string, string][]) {
      seen.add(key);
      if (want.get(key) !== `${terms}\u0001${facts}`) wrong.add(key);
    }
  });
  for (const key of want.keys()) if (!seen.has(key)) wrong.add(key);
  return [...wrong].sort();
}

/** Whether the counts kept with the term rows differ from a replay's (`state` holds the whole journal folded). */
export async function countDisagreement<S>(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<S>, state: S): Promise<boolean> {
  if (spec.terms === undefined || !(await everBuilt(q, ident, catalog, spec.file, termsTable(journalTable(spec.file))))) return false;
  return countsDisagree(q, ident, catalog, spec as StoreSpec<unknown>, spec.terms.entries(state));
}

/**
 * A page of the term rows (JournalStore.readTermRows): those holding every term of `among` (the GIN index), of a
 * fact and a key prefix, ordered by facts read as numbers (ties by key, then, so that pages do not overlap).
 */
export async function termRows(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  query: TermRowsQuery,
): Promise<{ hits: TermHit[]; total: number | undefined }> {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const fact = (n: number) => `split_part(r.facts, ' ', ${Math.trunc(n)})`;
  const where: string[] = [];
  if (query.among.length > 0) where.push(`r.terms @> ${param(arrayLiteral(query.among))}::text[]`);
  if (query.where !== undefined) where.push(`${fact(query.where.fact)} = ${param(query.where.equals)}`);
  if (query.prefix !== undefined && query.prefix !== '') where.push(`starts_with(r.key, ${param(query.prefix)})`);
  const from = `from ${ident(termsTable(journalTable(spec.file)))} r ${where.length === 0 ? '' : `where ${where.join(' and ')}`}`;
  // The first order by a fact's b-tree (schema.ts factNumber), the rest sorted among its ties: a page reads its rows.
  const order = [...query.order.map((o) => `${factNumber('r.facts', o.fact)} ${o.descending ? 'desc' : 'asc'}`), 'r.key collate "C"'].join(', ');
  const rows = await q.unsafe<{ key: string; facts: string }[]>(
    `select r.key, r.facts ${from} order by ${order} limit ${param(query.limit)} offset ${param(query.offset)}`,
    params as string[],
  );
  let total: number | undefined;
  // A page short of its limit read the whole answer past its offset: that is the total (several tags' among them,
  // which the per-tag counts cannot give: pg-term-counts.ts countedTotal).
  if (query.count && rows.length < query.limit && (rows.length > 0 || query.offset === 0)) total = query.offset + rows.length;
  const counted = countedOf(catalog, spec);
  if (query.count && total === undefined && counted !== undefined) total = await countedTotal(q, ident, spec, counted, query);
  if (query.count && total === undefined) {
    const [row] = await q.unsafe<{ n: string }[]>(`select count(*) as n ${from}`, params.slice(0, -2) as string[]);
    total = Number(row?.n ?? 0);
  }
  return { hits: rows.map((r) => ({ key: r.key, facts: r.facts, has: [] })), total };
}
