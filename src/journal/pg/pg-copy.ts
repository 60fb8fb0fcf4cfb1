// A journal's raw lines read out of PostgreSQL (`journal copy`'s source): page by page outside a transaction, or
// through a cursor inside the one consistent read of every journal; memory flat in the journal's size.
import type { Sql } from './client';
import { FETCH_ROWS } from './pg-fold';
import { journalTable, type Catalog } from './schema';

/** What reading lines needs of the store. */
interface LineSource {
  ident(table: string): string;
  guard<T>(fn: () => Promise<T>): Promise<T>;
  readCatalog(): Promise<Catalog>;
  readonly sql: Sql;
}

/** A journal's lines in order, each page its own short operation (a long-lived reader never holds a transaction). */
export async function* pagedLines(store: LineSource, file: string): AsyncIterable<Uint8Array> {
  const catalog = await store.guard(() => store.readCatalog());
  const table = journalTable(file);
  if (!catalog.tables.has(table)) return;
  let after = 0;
  for (;;) {
    const rows = await store.guard(() =>
      store.sql.unsafe<{ line: string; body: string }[]>(`select line, body from ${store.ident(table)} where line > $1 order by line limit ${FETCH_ROWS}`, [
        after,
      ]),
    );
    for (const row of rows) yield Buffer.from(row.body);
    if (rows.length < FETCH_ROWS) return;
    after = Number(rows.at(-1)!.line);
  }
}

/** A journal's lines in order through a cursor of the transaction `sql` is running. */
export async function* cursorLines(sql: Sql, ident: (table: string) => string, catalog: Catalog, file: string): AsyncIterable<Uint8Array> {
  const table = journalTable(file);
  if (!catalog.tables.has(table)) return;
  for await (const rows of sql
    .unsafe(`select body from ${ident(table)} order by line`)
    .values()
    .cursor(FETCH_ROWS)) {
    for (const [body] of rows as [string][]) yield Buffer.from(body);
  }
}
