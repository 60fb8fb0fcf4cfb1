// SQL on the test run's server from the test's own process, for the suites that read or tamper with rows often:
// psql (pg.ts) is a process and a login (SCRAM) a call, ~40 ms of CPU and the server's share; here one connection
// a server is kept and reused. The answer is psql's (`-A -t`): rows a line, columns joined by `|`, every value as
// the server's text (t/f, numbers, arrays as {…}), null as empty; a text of several statements answers its last.
// Every call starts from a fresh session (DISCARD ALL after it): a setting or temp table of one call is not the
// next one's, as with a psql a call. The connection closes itself when idle (a file's fork is never kept open).
import postgres, { type Sql } from 'postgres';
import { pgServerUrl } from './pg';

/** Every type postgres.js would parse, kept as the server's text (what psql prints). */
const RAW = [16, 17, 20, 21, 23, 26, 114, 700, 701, 1082, 1114, 1184, 3802];

const clients = new Map<string, Sql>();

function client(url: string): Sql {
  const u = new URL(url);
  u.searchParams.delete('schema');
  let sql = clients.get(u.href);
  if (sql === undefined) {
    sql = postgres(u.href, {
      max: 1,
      idle_timeout: 2,
      prepare: false,
      fetch_types: false,
      onnotice: () => {},
      types: { raw: { to: 25, from: RAW, serialize: (x: unknown) => String(x), parse: (x: string) => x } },
    });
    clients.set(u.href, sql);
  }
  return sql;
}

const cell = (value: unknown): string => (value === null || value === undefined ? '' : String(value));

/** `text` run on the server of `url` (the run's by default), answered as `psql -X -A -t -c text` prints it. */
export async function sqlText(text: string, url = pgServerUrl()): Promise<string> {
  const sql = client(url);
  let result: unknown[][] | unknown[][][];
  try {
    result = (await sql.unsafe(text).simple().values()) as unknown as typeof result;
  } catch (error) {
    // A transaction the text began and did not end is rolled back before the session is discarded.
    await sql.unsafe('rollback').simple();
    await sql.unsafe('discard all').simple();
    throw error;
  }
  await sql.unsafe('discard all').simple();
  // Several statements: one result each (postgres.js); psql prints the last.
  // (A statement's result carries its `command`; several statements' results are a plain array of those.)
  const rows = ('command' in result ? result : (result.at(-1) ?? [])) as unknown[][];
  return rows.map((row) => `${row.map(cell).join('|')}\n`).join('');
}

/** Every line of a journal of a PostgreSQL store (cli.ts's journalLines, over this connection). */
export async function journalRows(store: string, file: string): Promise<string[]> {
  const schema = new URL(store).searchParams.get('schema') ?? 'crux';
  const table = `journal_${file.replace(/\.jsonl$/, '')}`;
  const exists = (await sqlText(`select count(*) from pg_tables where schemaname = '${schema}' and tablename = '${table}'`, store)).trim() === '1';
  return exists ? (await sqlText(`select body from "${schema}".${table} order by line`, store)).split('\n').filter(Boolean) : [];
}
