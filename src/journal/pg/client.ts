// The PostgreSQL client for a shared store: loaded only here (its own bundle, dist/pg.cjs), one connection at a
// time, every wait bounded, and every failure of the server or the network turned into one line naming the server.
import type { Sql } from 'postgres';
import { CruxError } from '../../shared/errors';
import { scrubText } from '../../shared/scrub';
import { testHook } from '../../shared/test-hooks';
import type { ServerAddress, StoreUrl } from './url';
import { MIGRATION_BOUND_MS, migrationRunning } from './migration-bound';
export type { Sql } from 'postgres';

/**
 * How long the server may stay silent while crux waits for its answer, beyond the lock wait (the longest silence a
 * healthy server gives crux: other statements are short, long reads stream): a server silent past CRUX_LOCK_TIMEOUT
 * and this has stopped answering (frozen, a cable pulled, a lost route). CRUX_TEST_STALL_GRACE_MS: less, for tests.
 */
export const STALL_GRACE_MS = 4000;
const stallGraceMs = (): number => Number(testHook('CRUX_TEST_STALL_GRACE_MS')) || STALL_GRACE_MS;
/**
 * The server-side bounds (statement_timeout, idle_in_transaction_session_timeout) beyond the lock wait: they
 * end what a vanished or frozen crux left running on the server, and must stay above anything crux does
 * between two statements of one transaction (encoding a 1M-record import).
 */
const SERVER_GRACE_MS = 60_000;

/** A connection opened at most once: after it is lost, every query fails instead of reconnecting. */
export interface Client {
  readonly sql: Sql;
  /** True once the connection has closed or failed (lost, refused, ended, or the server went silent). */
  readonly lost: boolean;
  /** Ends the connection (waiting at most `timeout` seconds for what runs): not a loss. */
  end(timeout: number): Promise<void>;
}

export interface ClientOptions {
  readonly lockTimeoutMs: number;
  /** The one server of the URL this client connects to (pg-server.ts picks it among the URL's hosts). */
  readonly address: ServerAddress;
  /** Told once, when the connection's socket closes for any reason but `end` (the error it closed with). */
  readonly onLost?: (error: Error) => void;
  /** Notices on the channels the connection LISTENs to (`crux ui`, pg-reader.ts). */
  readonly onNotify?: (channel: string, payload: string) => void;
}

/**
 * Opens a connection (lazily: the first query connects). It never reconnects: a transaction whose connection was
 * lost must fail (the server rolled it back), not carry on in autocommit on a new connection; the store opens a
 * new client between transactions instead.
 *
 * Every wait is bounded: the TCP connect (CRUX_LOCK_TIMEOUT), the start-up and authentication exchange and every
 * statement's answer (the watchdog below: silence past the lock wait and STALL_GRACE_MS), the lock wait itself
 * (lock_timeout, on the server), and what the server lets a statement or an idle transaction run.
 */
export function openClient(url: StoreUrl, opts: ClientOptions): Client {
  const postgres = require('postgres') as typeof import('postgres');
  const net = require('node:net') as typeof import('node:net');
  const stallMs = opts.lockTimeoutMs + stallGraceMs();
  let opened = false;
  const state = { lost: false, ending: false };
  const { address } = opts;
  const socket = () =>
    new Promise<import('node:net').Socket>((resolve, reject) => {
      if (opened) {
        reject(Object.assign(new Error('the connection was lost'), { code: 'CONNECTION_CLOSED' }));
        return;
      }
      opened = true;
      const s = address.host.startsWith('/') ? net.connect(`${address.host}/.s.PGSQL.${address.port}`) : net.connect(address.port, address.host);
      // What the client names the peer by in TLS (SNI, verify-full).
      Object.assign(s, { host: address.host, port: address.port });
      s.setTimeout(opts.lockTimeoutMs, () => s.destroy(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' })));
      s.once('error', reject);
      let failure: Error | undefined;
      s.once('error', (error) => (failure ??= error));
      s.once('close', () => {
        state.lost = true;
        if (!state.ending) opts.onLost?.(failure ?? Object.assign(new Error('the connection was lost'), { code: 'CONNECTION_CLOSED' }));
      });
      s.once('connect', () => {
        s.setTimeout(0);
        s.removeListener('error', reject);
        // Encrypted, the frames cannot be read: the server-side bounds and connect_timeout remain.
        if (!url.tls) watchAnswers(s, stallMs);
        resolve(s);
      });
    });
  const ms = (n: number) => Math.max(1, Math.round(n));
  const sql = withoutSessionAttrs(() =>
    postgres(url.connect, {
      max: 1,
      // The one server crux tries (the socket function connects to it), as arrays, as the client keeps them: typed
      // as strings, which it would split at an IPv6 address's colons.
      ...({ host: [address.host], port: [address.port] } as object),
      // Not in the typings, documented: a function that returns a connected socket.
      ...({ socket } as object),
      // The start-up exchange (a server that accepts the connection and never answers): bounded as a statement is.
      connect_timeout: Math.ceil(stallMs / 1000),
      onclose: () => {
        state.lost = true;
      },
      // Array types are not used: fetching them costs a query on every connect.
      fetch_types: false,
      // Notices (`schema already exists`) are not crux's to print: stderr carries crux's own lines only.
      onnotice: () => {},
      ...(opts.onNotify !== undefined ? { onnotify: opts.onNotify } : {}),
      // Sent in the start-up message: no round trip of their own.
      connection: {
        application_name: 'crux',
        lock_timeout: ms(opts.lockTimeoutMs),
        statement_timeout: ms(opts.lockTimeoutMs + SERVER_GRACE_MS),
        idle_in_transaction_session_timeout: ms(opts.lockTimeoutMs + SERVER_GRACE_MS),
      },
    }),
  );
  return {
    sql,
    get lost() {
      return state.lost;
    },
    end(timeout) {
      state.ending = true;
      return sql.end({ timeout });
    },
  };
}

/**
 * Runs `make` (the client's constructor) with PGTARGETSESSIONATTRS out of the environment: the client would act on
 * it by itself (and refuse `any`), where crux picks the server among the URL's hosts itself (pg-server.ts).
 */
function withoutSessionAttrs<T>(make: () => T): T {
  const saved = process.env.PGTARGETSESSIONATTRS;
  if (saved === undefined) return make();
  delete process.env.PGTARGETSESSIONATTRS;
  try {
    return make();
  } finally {
    process.env.PGTARGETSESSIONATTRS = saved;
  }
}

/**
 * The client-side deadline: from each write crux sends until the server's answer is complete (ReadyForQuery, or
 * PortalSuspended when a cursor waits for crux), the server must not be silent for `stallMs`; if it is, the
 * socket is destroyed and the statement waiting fails with SERVER_SILENT (exit 75). Reads the message frames
 * (type byte, 4-byte length) as they stream past, without copying them.
 */
function watchAnswers(s: import('node:net').Socket, stallMs: number): void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    const bound = migrationRunning() ? Math.max(stallMs, MIGRATION_BOUND_MS + stallGraceMs()) : stallMs;
    timer = setTimeout(() => {
      s.destroy(Object.assign(new Error(`the server did not answer within ${bound} ms`), { code: 'SERVER_SILENT' }));
    }, bound);
    timer.unref();
  };
  const disarm = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const write = s.write.bind(s) as (...args: unknown[]) => boolean;
  (s as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]) => {
    arm();
    return write(...args);
  };
  // Where the next frame starts, relative to the next chunk; and the header bytes of a frame split across chunks.
  let skip = 0;
  const header: number[] = [];
  s.on('data', (chunk: Buffer) => {
    if (timer !== undefined) arm();
    let at = skip;
    skip = 0;
    while (at < chunk.length) {
      header.push(chunk[at]!);
      at += 1;
      if (header.length < 5) continue;
      const type = header[0]!;
      const length = ((header[1]! << 24) | (header[2]! << 16) | (header[3]! << 8) | header[4]!) >>> 0;
      header.length = 0;
      // 'Z' ReadyForQuery, 's' PortalSuspended: the server has answered and waits for crux.
      if (type === 0x5a || type === 0x73) disarm();
      at += length - 4;
    }
    if (at > chunk.length) skip = at - chunk.length;
  });
  s.once('close', disarm);
}

// Connection-level failures, as the client or Node's net module name them.
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ENOENT: 'no server socket at that path',
  CONNECT_TIMEOUT: 'the connection timed out',
  SERVER_SILENT: 'the server stopped answering',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was lost',
  CONNECTION_CLOSED: 'the connection was lost',
  CONNECTION_DESTROYED: 'the connection was lost',
  CONNECTION_ENDED: 'the connection was lost',
};

/** An error's code (a SQLSTATE, Node's, the client's), or ''. */
const codeOf = (error: unknown): string => String((error as { code?: unknown }).code ?? '');
/** What a server or the network said, fit for a message: scrubbed, on one line, at most 200 characters. */
const saidOf = (message: string): string => scrubText(message).replace(/\s+/g, ' ').slice(0, 200);

/** Whether an error means the connection is gone (the store opens a new one for its next operation). */
export const connectionLost = (error: unknown): boolean => error instanceof Error && (codeOf(error) in UNREACHABLE || codeOf(error).startsWith('08'));

/** Server errors (SQLSTATE) that mean "not now", each with what the message says. */
function sqlstateReason(code: string): string | undefined {
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'the server is shutting down or starting up';
  if (code === '53300') return 'the server has too many connections';
  if (code.startsWith('53')) return 'the server is out of resources (disk or memory)';
  if (code.startsWith('08')) return 'the connection failed';
  if (code === '40001' || code === '40P01') return 'a concurrent transaction conflicted';
  if (code === '25006') return 'the server is read-only (a standby?)';
  if (code === '57014') return 'the server cancelled a statement that ran past its bound (statement_timeout)';
  if (code === '25P03') return 'the server ended a transaction left idle past its bound';
  return undefined;
}

/** Server refusals that retrying cannot change (exit 5): what is missing and how to fix it. */
function refusal(code: string, url: StoreUrl, message: string): CruxError | undefined {
  const said = saidOf(message);
  const server = `the PostgreSQL server ${url.server}`;
  if (code === '28P01') {
    return new CruxError(
      'store_refused',
      `${server} refused the password: ${said}`,
      'check the user and password in the URL (or PGPASSWORD, ~/.pgpass); retrying will not help',
    );
  }
  if (code === '28000') {
    const role = /role "([^"]*)" does not exist/.exec(message);
    return role
      ? new CruxError(
          'store_refused',
          `${server} has no role ${JSON.stringify(role[1])}: ${said}`,
          `create it (createuser ${role[1]}) or name an existing user in the URL; retrying will not help`,
        )
      : new CruxError(
          'store_refused',
          `${server} does not let the user in: ${said}`,
          "check the server's pg_hba.conf and the user in the URL; retrying will not help",
        );
  }
  if (code === '3D000') {
    return new CruxError(
      'store_refused',
      `${server} has no database ${JSON.stringify(url.database)}: ${said}`,
      `create it (createdb ${url.database}) or name an existing database in the URL; retrying will not help`,
    );
  }
  if (code === '42501') {
    return new CruxError(
      'store_refused',
      `${server}: permission denied: ${said}`,
      `grant the user what the schema ${url.schema} needs (GRANT CREATE, USAGE), or run \`crux store init\` as its owner`,
    );
  }
  return undefined;
}

/** A failure in a few words (`connection refused`, the server's own message), for a list naming every host. */
export function failureReason(error: unknown): string {
  const code = codeOf(error);
  const reason = UNREACHABLE[code] ?? sqlstateReason(code);
  const said = saidOf(error instanceof Error ? error.message : String(error));
  return reason === undefined ? said : code in UNREACHABLE ? reason : `${reason}: ${said}`;
}

/**
 * The CruxError for a failure of the client or the server (exit 75, or 5 for a refusal that retrying cannot
 * change; naming the server and its user, never the password), or undefined when the error is something else (a
 * bug, which the caller rethrows as is).
 */
export function storeError(error: unknown, url: StoreUrl, lockTimeoutMs: number): CruxError | undefined {
  if (error instanceof CruxError || !(error instanceof Error)) return undefined;
  const code = codeOf(error);
  if (code === '55P03') {
    return new CruxError(
      'lock_timeout',
      `the writers' lock of the store ${url.server} (schema ${url.schema}) was not free within ${lockTimeoutMs} ms`,
      'another crux process holds it; nothing was changed; safe to retry (CRUX_LOCK_TIMEOUT sets the wait)',
    );
  }
  const refused = refusal(code, url, error.message);
  if (refused !== undefined) return refused;
  const reason = UNREACHABLE[code] ?? sqlstateReason(code);
  if (reason === undefined) return undefined;
  const bound = code === 'SERVER_SILENT' ? ` within ${lockTimeoutMs + stallGraceMs()} ms` : '';
  const detail = code in UNREACHABLE ? '' : `: ${saidOf(error.message)}`;
  return new CruxError('store_unavailable', `cannot use the PostgreSQL store ${url.server}: ${reason}${bound}${detail.includes(reason) ? '' : detail}`);
}
