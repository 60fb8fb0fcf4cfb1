// A journal's secondary keys (StoreSpec.secondary) as rows the database indexes: `journal_<name>_index` holds
// each entity's current value of each name, recomputed from its folded state by every write that touches it, so
// that `session list --agent`, `--stranded` and `reap` read only the entities that may match, a limited list only a
// page of them, completion only those whose value starts with what is typed.
//
// Derived state (SPEC §3, §11): never trusted unverified. `secondary_indexes` binds the rows to the journal's
// head (the line and hash of its last row, as a cache file names its journal's head) and says whether they are
// trusted; the table's triggers and the journal's clear that on any write crux did not make (pg-trust.ts). A read
// trusts the rows only when the binding names the head the journal has and is trusted, and both tables are
// guarded: a row deleted, added or edited (one wrong `num_value`, one journal row's body) by hand fails it, and
// the read folds the whole journal instead (the same answer, slower) until a write or `journal check --repair`
// rebuilds them. (Over 300 lines: the index rows' one job whole — written, trusted, read by value, by the newest and
// by prefix, and compared with a replay.)
import { entityOf } from '../core/policy';
import type { JournalRecord } from '../codec/record';
import type { IndexQuery, NewestQuery, StoreSpec } from '../codec/store-spec';
import type { Sql } from './client';
import { arrayLiteral, indexTable, journalTable, type Catalog } from './schema';
import { eachPage } from './pg-pages';
import { addTallyRows, countJournal, TALLY_NAME, TALLY_ROWS } from './pg-tally';

/** Entities whose index rows are inserted per statement. */
const WRITE_KEYS = 5000;

/** Whether a journal keeps index rows: its secondary keys', its tally's (pg-tally.ts), or both. */
export const keepsIndexRows = (spec: StoreSpec<any>): boolean => spec.secondary !== undefined || spec.tally !== undefined;
/** The binding's version: the secondary keys' (0 for a tally alone). */
const indexVersion = (spec: StoreSpec<any>): number => spec.secondary?.version ?? 0;
/** The binding's names: the secondary keys', and TALLY_NAME where the rows hold the tally too (pg-tally.ts). */
const signature = (spec: StoreSpec<unknown>) => [...(spec.secondary?.names ?? []), ...(spec.tally === undefined ? [] : [TALLY_NAME])].join(',');

/** The row of a journal the derived rows follow. */
export interface IndexHead {
  readonly line: number;
  readonly h: string;
}

/**
 * Whether the derived rows bound in `binding` (its row for `file`) may be believed: the table and its journal's
 * table are guarded, and the binding is of `version` (and `names`), trusted, and names the journal's current head.
 * One indexed look-up.
 */
export async function boundCurrent(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  derived: { table: string; binding: string; file: string; version: number; names?: string },
): Promise<boolean> {
  const journal = journalTable(derived.file);
  if (!catalog.tables.has(derived.binding) || !catalog.guarded.has(journal) || !catalog.guarded.has(derived.table)) return false;
  const [row] = await q.unsafe<{ ok: boolean }[]>(
    `select b.trusted and b.version = $2 ${derived.names === undefined ? '' : 'and b.names = $3'}
        and b.line = coalesce(hd.line, 0) and b.h = coalesce(hd.h, '') as ok
     from ${ident(derived.binding)} b left join lateral (select line, h from ${ident(journal)} order by line desc limit 1) hd on true
     where b.journal = $1`,
    derived.names === undefined ? [derived.file, derived.version] : [derived.file, derived.version, derived.names],
  );
  return row?.ok === true;
}

/** Whether the index rows of `spec`'s journal can be trusted (see boundCurrent). */
export async function indexCurrent(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>): Promise<boolean> {
  if (!keepsIndexRows(spec)) return false;
  return boundCurrent(q, ident, catalog, {
    table: indexTable(journalTable(spec.file)),
    binding: 'secondary_indexes',
    file: spec.file,
    version: indexVersion(spec),
    names: signature(spec),
  });
}

/**
 * Whether the index rows follow another declaration of the keys (an older crux's version or names): stale, not
 * wrong — the next write rebuilds them, and until then reads fold the journal (`journal check` does not count
 * them as damage).
 */
export async function indexOfOtherVersion(q: Sql, ident: (t: string) => string, catalog: Catalog, spec: StoreSpec<unknown>): Promise<boolean> {
  if (!keepsIndexRows(spec) || !catalog.tables.has('secondary_indexes')) return false;
  const [row] = await q.unsafe<{ other: boolean }[]>(`select version <> $2 or names <> $3 as other from ${ident('secondary_indexes')} where journal = $1`, [
    spec.file,
    indexVersion(spec),
    signature(spec),
  ]);
  return row?.other === true;
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

/** Entities read in a limited list's first page (a terminal's list shows 50). */
const NEWEST_PAGE = 64;

/**
 * JournalStore.readNewest through trusted index rows: the entities with the highest values of an ordered key,
 * a page at a time until `enough` (each page 4× the one before, the keys read so far folded again by `fold`: at
 * most 4/3 of what the answer needs), with how many match counted in the index (not with `count: false`: a
 * count reads every matching index row).
 */
export async function readNewestRows<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  query: NewestQuery,
  enough: (state: S) => boolean,
  fold: (keys: readonly string[]) => Promise<S>,
): Promise<{ state: S; total: number | undefined }> {
  const any = spec as StoreSpec<unknown>;
  const total = query.count === false ? undefined : await countAtMost(q, ident, any, query);
  // A count alone (enough before any entity): nothing read.
  if (enough(spec.initial())) return { state: spec.initial(), total };
  const keys: string[] = [];
  let last: NewestAfter | undefined;
  // Whether a key of the last value read holds a character of U+E000–U+FFFF (see below).
  let high = false;
  for (let page = NEWEST_PAGE; ; page *= 4) {
    const more = await newestKeys(q, ident, any, query, page, last);
    for (const k of more) {
      if (k.value !== last?.value) high = false;
      high ||= HIGH_BMP.test(k.key);
      keys.push(k.key);
      last = k;
    }
    const state = await fold(keys);
    if (more.length < page) return { state, total };
    if (!enough(state)) continue;
    // Ties come by key in the caller's order, so every entity not read sorts after every one read: a page may end
    // inside a tie group. Code points order as UTF-16 units do, but for those above U+FFFF, which sort before
    // U+E000–U+FFFF in units: a read key that holds one of the latter may then sort after an unread one of its
    // value, and the rest of that value is read (its keys only where one is: an id's Unicode, seldom).
    if (!high) return { state, total };
    const rest = await q.unsafe<{ key: string }[]>(
      `select key from ${ident(indexTable(journalTable(spec.file)))} where name = $1 and num_value = $2 and key collate "C" > $3`,
      [query.index, last!.value, last!.key],
    );
    return { state: rest.length === 0 ? state : await fold([...keys, ...rest.map((r) => r.key)]), total };
  }
}

/** A character of U+E000–U+FFFF (readNewestRows): not a surrogate, but after them in UTF-16 units. */
const HIGH_BMP = /[\uE000-\uFFFF]/;

/** A position in a read newest first: the value and key of the last entity read. */
interface NewestAfter {
  readonly value: number;
  readonly key: string;
}

/**
 * The next `limit` entities (after `after`) whose value of the ordered key `query.index` is at most
 * `query.atMost` (and at least `query.atLeast`), highest value first, ties by key in code-unit order (collate "C",
 * whatever the database's collation: a replay's order, domain/session/query.ts byRecency): the index's b-tree in this order
 * (schema.ts indexDdl, `_newest`; since schema 8) read forwards: the page's rows, no tie group sorted.
 */
async function newestKeys(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<unknown>,
  query: NewestQuery,
  limit: number,
  after: NewestAfter | undefined,
): Promise<NewestAfter[]> {
  const table = ident(indexTable(journalTable(spec.file)));
  const from = after === undefined ? '' : 'and num_value <= $5 and (num_value < $5 or key collate "C" > $6)';
  const bounds = [query.index, query.atMost, limit, query.atLeast ?? Number.MIN_SAFE_INTEGER];
  const rows = await q.unsafe<{ key: string; value: string }[]>(
    `select key, num_value as value from ${table} where name = $1 and num_value <= $2 and num_value >= $4 ${from} order by num_value desc, key collate "C" limit $3`,
    after === undefined ? bounds : [...bounds, after.value, after.key],
  );
  return rows.map((r) => ({ key: r.key, value: Number(r.value) }));
}

/** How many entities' value of `query.index` lies in the query's range: counted in the index, none read. */
async function countAtMost(q: Sql, ident: (t: string) => string, spec: StoreSpec<unknown>, query: NewestQuery): Promise<number> {
  const [row] = await q.unsafe<{ n: string }[]>(
    `select count(*) as n from ${ident(indexTable(journalTable(spec.file)))} where name = $1 and num_value <= $2 and num_value >= $3`,
    [query.index, query.atMost, query.atLeast ?? Number.MIN_SAFE_INTEGER],
  );
  return Number(row?.n ?? 0);
}

/** Entities read in a read by prefix's first page (completion offers 200), each page 4× the one before. */
const PREFIX_PAGE = 256;

/**
 * JournalStore.readPrefix through trusted index rows: the entities whose value of the prefixed key `query.index`
 * starts with `query.prefix`, in the values' code-point order (collation "C": the b-tree's own where the
 * database's is C, as crux's clusters are), a page at a time until `enough` — the answer's rows, not the store's.
 * Values are whole here (a data directory keeps 7 bytes of each), so no tie is read past.
 */
export async function readPrefixRows<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  query: { readonly index: string; readonly prefix: string },
  enough: (state: S) => boolean,
  fold: (keys: readonly string[]) => Promise<S>,
): Promise<S> {
  const table = ident(indexTable(journalTable(spec.file)));
  // Every text that starts with the prefix sorts below the prefix with its last code point raised by one.
  const last = query.prefix.codePointAt(query.prefix.length - 1);
  const cut = last === undefined ? undefined : query.prefix.length - (last > 0xffff ? 2 : 1);
  const below = last === undefined || last >= 0x10ffff ? undefined : `${query.prefix.slice(0, cut)}${String.fromCodePoint(last + 1)}`;
  const keys: string[] = [];
  let after: { value: string; key: string } | undefined;
  for (let page = PREFIX_PAGE; ; page *= 4) {
    const params: unknown[] = [query.index, query.prefix, page];
    const where = [`name = $1`, `text_value collate "C" >= $2`, `starts_with(text_value, $2)`];
    if (below !== undefined) where.push(`text_value collate "C" < $${params.push(below)}`);
    if (after !== undefined) where.push(`(text_value collate "C", key) > ($${params.push(after.value)}, $${params.push(after.key)})`);
    const rows = await q.unsafe<{ key: string; value: string }[]>(
      `select key, text_value as value from ${table} where ${where.join(' and ')} order by text_value collate "C", key limit $3`,
      params as never[],
    );
    keys.push(...rows.map((r) => r.key));
    after = rows.at(-1) ?? after;
    const state = await fold(keys);
    if (rows.length < page || enough(state)) return state;
  }
}

/** The entity keys a batch of lines touches. */
export function keysOf(spec: StoreSpec<unknown>, records: readonly JournalRecord[]): string[] {
  const keys = new Set<string>();
  for (const record of records) {
    const key = entityOf(spec, record);
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
 * Writes the index rows of `keys` from `state` (which holds those entities as they now are): their old rows go,
 * their current values come in, and the binding follows `head` (the journal's last row after this write). With
 * `all`, every row of the journal is replaced and the binding written afresh, trusted.
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
  if (!keepsIndexRows(spec)) return;
  const table = ident(indexTable(journalTable(spec.file)));
  if (all) await q.unsafe(`delete from ${table}`);
  else if (keys.length > 0) await q.unsafe(`delete from ${table} where key = any($1::text[]) and not ${TALLY_ROWS}`, [arrayLiteral(keys)]);
  await insertIndexRows(q, table, spec, state, keys);
  if (all && spec.tally !== undefined) await addTallyRows(q, table, await countJournal(q, ident(journalTable(spec.file)), spec as StoreSpec<unknown>));
  await bindIndexRows(q, ident, spec, head, all);
}

/** Inserts the index rows of `keys` from `state` into `table` (which holds none of theirs). */
export async function insertIndexRows<S>(q: Sql, table: string, spec: StoreSpec<S>, state: S, keys: readonly string[]): Promise<void> {
  // WRITE_KEYS entities a statement: a rebuild of every row stays a series of short statements, each within the
  // client's bound (client.ts), however many entities the journal holds.
  for (let i = 0; i < keys.length; i += WRITE_KEYS) {
    const rows = expectedRows(spec, state, keys.slice(i, i + WRITE_KEYS));
    if (rows.length === 0) continue;
    await q.unsafe(`insert into ${table} (key, name, text_value, num_value) select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[])`, [
      arrayLiteral(rows.map((r) => r.key)),
      arrayLiteral(rows.map((r) => r.name)),
      arrayLiteral(rows.map((r) => r.text)),
      arrayLiteral(rows.map((r) => r.num)),
    ]);
  }
}

/** Binds a journal's index rows to `head` (bindRows): afresh and trusted with `all`. */
export async function bindIndexRows<S>(q: Sql, ident: (t: string) => string, spec: StoreSpec<S>, head: IndexHead, all: boolean): Promise<void> {
  await bindRows(q, ident, 'secondary_indexes', spec.file, { version: indexVersion(spec), names: signature(spec as StoreSpec<unknown>) }, head, all);
}

/**
 * Binds derived rows to `head`: afresh and trusted after a rebuild (`all`), else only following the head (a write
 * maintaining rows it trusted: the flag stays as the triggers left it).
 */
export async function bindRows(
  q: Sql,
  ident: (t: string) => string,
  binding: string,
  file: string,
  of: { version: number; names?: string },
  head: IndexHead,
  all: boolean,
): Promise<void> {
  if (!all) {
    await q.unsafe(`update ${ident(binding)} set line = $2, h = $3 where journal = $1`, [file, head.line, head.h]);
    return;
  }
  const named = of.names === undefined ? { cols: '', vals: '', set: '' } : { cols: ', names', vals: ', $5', set: ', names = excluded.names' };
  await q.unsafe(
    `insert into ${ident(binding)} (journal, version, line, h, trusted${named.cols}) values ($1, $2, $3, $4, true${named.vals})
     on conflict (journal) do update set version = excluded.version, line = excluded.line, h = excluded.h, trusted = true${named.set}`,
    of.names === undefined ? [file, of.version, head.line, head.h] : [file, of.version, head.line, head.h, of.names],
  );
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
  keys: ReadonlySet<string>,
): Promise<string[]> {
  if (!keepsIndexRows(spec)) return [];
  // Compared entity by entity: the table's rows a page at a time in key order (an entity's rows together), each
  // entity's set against what the replay gives it, so that neither side is held whole (100k sessions' rows and
  // their expected values held at once took hundreds of MiB beside the replay).
  const want = (key: string): Map<string, string> => {
    const rows = new Map<string, string>();
    if (keys.has(key)) for (const r of expectedRows(spec, state, [key])) rows.set(r.name, `${r.text}\u0001${r.num}`);
    return rows;
  };
  const wrong = new Set<string>();
  const seen = new Set<string>();
  let current: string | undefined;
  let have = new Map<string, string>();
  const settle = () => {
    if (current === undefined) return;
    seen.add(current);
    const expected = want(current);
    if (expected.size !== have.size || [...expected].some(([name, value]) => have.get(name) !== value)) wrong.add(current);
  };
  const table = indexTable(journalTable(spec.file));
  if (catalog.tables.has(table)) {
    // In the check's transaction (its lock): each page a statement of it.
    // The tally's rows (no entity's) are compared apart (pg-reindex.ts).
    await eachPage(q, `select key, name, text_value, num_value from ${ident(table)} where not ${TALLY_ROWS} order by key`, [], true, (rows) => {
      for (const [key, name, text, num] of rows as [string, string, string | null, string | null][]) {
        if (key !== current) {
          settle();
          current = key;
          have = new Map();
        }
        have.set(name, `${text}\u0001${num === null ? null : Number(num)}`);
      }
    });
    settle();
  }
  for (const key of keys) if (!seen.has(key) && want(key).size > 0) wrong.add(key);
  return [...wrong].sort();
}
