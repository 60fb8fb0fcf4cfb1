// The dashboard's own PostgreSQL connections, beside the store's: LISTEN for the writers' commit notices
// (pg-transaction.ts notifies `crux_changed` with `<schema>:<journal file>` in the writing transaction, so a notice
// arrives only once its records are committed), the newest rows of a journal, and each journal table's size.
//
// Both follow the store across a failover (SPEC §11, "Several hosts"): a connection lost is replaced at the next
// request by one to whichever of the URL's servers answers then; the listening one, which must be on a primary
// (a standby neither sends nor relays notices), is made again as soon as it is lost, and once it is back every
// journal is told changed, so that every open dashboard reads its view again from the server that holds it now.
import { failureReason, type Client, type Sql } from './client';
import { PgConnection } from './pg-connection';
import { openServer, type ServerFacts } from './pg-server';
import { journalTable } from './schema';
import { parseStoreUrl, type StoreUrl } from './url';

/** The channel pg-transaction.ts notifies on commit. */
const CHANGE_CHANNEL = 'crux_changed';
const PAGE = 2000;
const UNDEFINED_TABLE = '42P01';
/** The dashboard's bound on a connect and a statement (it takes no lock). */
const BOUND_MS = 10_000;
/** Between two attempts to listen again after the listening connection was lost. */
const RELISTEN_MS = 1000;
/** Between two looks for a primary, when a standby answered. */
const STANDBY_RETRY_MS = 5000;
/** Above every line number. */
const TOP = '9223372036854775807';

export interface PgReader {
  /** The journal's record lines, newest first, while `keep` says so. */
  linesBackwards(file: string, keep: (line: string) => boolean): Promise<void>;
  /**
   * Notes the journal's newest record as seen (its seq and hash), as `linesBackwards` does: for an answer read from
   * derived rows that cover it (the activity counts), so that records lost in a failover are still told.
   */
  seeHead(file: string): Promise<void>;
  sizes(files: readonly string[]): Promise<{ name: string; file: string; bytes: number; modified_at: null }[]>;
  /**
   * Calls `onChange` with the journal's name (`sessions`) after each commit to it, from any host; and with every
   * journal of `files` once listening again after the connection was lost (commits may have been missed).
   */
  listen(onChange: (journal: string) => void, files?: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** A connection as the store's, whose heads seen the listening connection verifies too. */
class ReadConnection extends PgConnection {
  readonly seen = this.link.seen;
}

/** `tell`: a line for the operator (a standby's lag, a lost listener). */
export function openPgReader(rawUrl: string, what: string, tell: (message: string) => void = () => {}): PgReader {
  const url: StoreUrl = parseStoreUrl(rawUrl, what);
  // The reads' connection is made, followed across a failover and told as the store's is (pg-connection.ts).
  const reads = new ReadConnection(url, BOUND_MS, tell);
  let listening: Client | undefined;
  // The journals' heads the overview read (its newest rows), verified on another primary as the store's are.
  const seen = reads.seen;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  // On another primary than the heads were seen on (a standby promoted): what is gone is said, once.
  const compare = async (client: Client, facts: ServerFacts) => {
    for (const warning of await seen.arrived(client.sql, url.schema, reads.location, facts)) tell(warning);
  };
  const guard = <T>(fn: (sql: Sql) => Promise<T>): Promise<T> => reads.guard(() => fn(reads.sql));
  // Notices are sent by the primary only: with several hosts, the listener settles on one.
  const listenUrl: StoreUrl = url.hosts.length > 1 ? { ...url, targetSessionAttrs: 'primary' } : url;
  /** Listens on a primary; false when the server that answered is a standby (it relays no notices). */
  const subscribe = async (onChange: (journal: string) => void, again: () => void): Promise<boolean> => {
    const { client, facts } = await openServer(listenUrl, {
      lockTimeoutMs: BOUND_MS,
      onNotify: (_channel, payload) => {
        const at = payload.indexOf(':');
        if (payload.slice(0, at) === url.schema) onChange(payload.slice(at + 1).replace(/\.jsonl$/, ''));
      },
      onLost: (error) => {
        if (closed) return;
        tell(`${url.label}: the dashboard's live updates stopped (${failureReason(error)}); listening again`);
        again();
      },
    });
    if (facts.standby) {
      await client.end(0).catch(() => {});
      return false;
    }
    listening = client;
    await client.sql.unsafe(`listen ${CHANGE_CHANNEL}`);
    await compare(client, facts);
    return true;
  };
  const seeHead = (file: string, body: string) => {
    try {
      const { seq, h } = JSON.parse(body) as { seq?: unknown; h?: unknown };
      if (typeof seq === 'number' && typeof h === 'string') seen.saw(file, { seq, h });
    } catch {}
  };
  return {
    linesBackwards: (file, keep) =>
      guard(async (sql) => {
        let below = TOP;
        for (;;) {
          let rows: { at: string; body: string }[];
          try {
            // Ordered by the column (an output named `line`, the text, would order as text: 9 before 10, and every
            // page a sort of the whole table instead of a read of the primary key backwards).
            rows = await sql.unsafe<{ at: string; body: string }[]>(
              `select line::text as at, body from ${reads.ident(journalTable(file))} where line < $1 order by line desc limit ${PAGE}`,
              [below],
            );
          } catch (error) {
            if ((error as { code?: string }).code === UNDEFINED_TABLE) return;
            throw error;
          }
          if (below === TOP && rows[0] !== undefined) seeHead(file, rows[0].body);
          for (const row of rows) if (!keep(row.body)) return;
          if (rows.length < PAGE) return;
          below = rows[rows.length - 1]!.at;
        }
      }),
    seeHead: (file) =>
      guard(async (sql) => {
        try {
          const [row] = await sql.unsafe<{ body: string }[]>(`select body from ${reads.ident(journalTable(file))} order by line desc limit 1`);
          if (row !== undefined) seeHead(file, row.body);
        } catch (error) {
          if ((error as { code?: string }).code !== UNDEFINED_TABLE) throw error;
        }
      }),
    sizes: (files) =>
      guard(async (sql) => {
        const names = files.map((f) => `${url.schema}.${journalTable(f)}`);
        const rows = await sql.unsafe<{ bytes: string | null }[]>(
          'select pg_total_relation_size(to_regclass(n))::text as bytes from unnest($1::text[]) with ordinality as t(n, i) order by i',
          [`{${names.join(',')}}`],
        );
        return files.map((file, i) => ({ name: file.replace(/\.jsonl$/, ''), file, bytes: Number(rows[i]?.bytes ?? 0), modified_at: null }));
      }),
    listen: (onChange, files = []) =>
      guard(async () => {
        const again = (delay = RELISTEN_MS) => {
          clearTimeout(retry);
          void listening?.end(0).catch(() => {});
          listening = undefined;
          retry = setTimeout(() => {
            if (closed) return;
            subscribe(onChange, again).then(
              (on) => {
                if (!on) return again(STANDBY_RETRY_MS);
                tell(`${url.label}: the dashboard listens again; every view is read again from the server`);
                for (const file of files) onChange(file.replace(/\.jsonl$/, ''));
              },
              () => again(),
            );
          }, delay);
          retry.unref();
        };
        // A standby named alone serves the dashboard's reads; its live updates wait until it is promoted.
        if (!(await subscribe(onChange, again))) {
          tell(`${url.label}: the server is a standby: the dashboard serves its reads, and its live updates wait for a primary`);
          again(STANDBY_RETRY_MS);
        }
      }),
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await Promise.all([reads.close(), listening?.end(2).catch(() => {})]);
    },
  };
}
