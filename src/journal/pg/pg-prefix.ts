// Completion's read on PostgreSQL: the entities whose prefixed value starts with what is typed, through the trusted
// index rows of their journal (pg-index.ts), a page at a time, so that what is read follows the answer.
import type { StoreSpec } from '../codec/store-spec';
import type { Sql } from './client';
import { indexTable, journalTable } from './schema';

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
