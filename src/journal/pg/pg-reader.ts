// The dashboard's own PostgreSQL connection, beside the store's: LISTEN for the writers' commit notices
// (pg-transaction.ts notifies `crux_changed` with `<schema>:<journal file>` in the writing transaction, so a notice
// arrives only once its records are committed), the newest rows of a journal, and each journal table's size.
import type { Sql } from 'postgres';
import { storeError } from './client';
import { journalTable } from './schema';
import { parseStoreUrl, type StoreUrl } from './url';

/** The channel pg-transaction.ts notifies on commit. */
const CHANGE_CHANNEL = 'crux_changed';
const PAGE = 2000;
const UNDEFINED_TABLE = '42P01';

export interface PgReader {
  /** The journal's record lines, newest first, while `keep` says so. */
  linesBackwards(file: string, keep: (line: string) => boolean): Promise<void>;
  sizes(files: readonly string[]): Promise<{ name: string; file: string; bytes: number; modified_at: null }[]>;
  /** Calls `onChange` with the journal's name (`sessions`) after each commit to it, from any host. */
  listen(onChange: (journal: string) => void): Promise<void>;
  close(): Promise<void>;
}

export function openPgReader(rawUrl: string, what: string): PgReader {
  const url: StoreUrl = parseStoreUrl(rawUrl, what);
  const postgres = require('postgres') as typeof import('postgres');
  const sql: Sql = postgres(url.connect, { max: 1, fetch_types: false, onnotice: () => {}, connect_timeout: 10, connection: { application_name: 'crux ui' } });
  const table = (file: string) => `"${url.schema}"."${journalTable(file)}"`;
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      throw storeError(error, url, 0) ?? error;
    }
  };
  return {
    linesBackwards: (file, keep) =>
      guard(async () => {
        let below = '9223372036854775807';
        for (;;) {
          let rows: { line: string; body: string }[];
          try {
            rows = await sql.unsafe<{ line: string; body: string }[]>(
              `select line::text as line, body from ${table(file)} where line < $1 order by line desc limit ${PAGE}`,
              [below],
            );
          } catch (error) {
            if ((error as { code?: string }).code === UNDEFINED_TABLE) return;
            throw error;
          }
          for (const row of rows) if (!keep(row.body)) return;
          if (rows.length < PAGE) return;
          below = rows[rows.length - 1]!.line;
        }
      }),
    sizes: (files) =>
      guard(async () => {
        const names = files.map((f) => `${url.schema}.${journalTable(f)}`);
        const rows = await sql.unsafe<{ bytes: string | null }[]>(
          'select pg_total_relation_size(to_regclass(n))::text as bytes from unnest($1::text[]) with ordinality as t(n, i) order by i',
          [`{${names.join(',')}}`],
        );
        return files.map((file, i) => ({ name: file.replace(/\.jsonl$/, ''), file, bytes: Number(rows[i]?.bytes ?? 0), modified_at: null }));
      }),
    listen: (onChange) =>
      guard(async () => {
        await sql.listen(CHANGE_CHANNEL, (payload) => {
          const at = payload.indexOf(':');
          if (payload.slice(0, at) === url.schema) onChange(payload.slice(at + 1).replace(/\.jsonl$/, ''));
        });
      }),
    close: () => sql.end({ timeout: 2 }),
  };
}
