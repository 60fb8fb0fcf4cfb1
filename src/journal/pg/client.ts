// The PostgreSQL client for a shared store: loaded only here (its own bundle, dist/pg.cjs), one connection per
// command, and every failure of the server or the network turned into one line that names the server.
import type { Sql } from 'postgres';
import { CruxError } from '../../shared/errors';
import { scrubText } from '../../shared/scrub';
import type { StoreUrl } from './url';

export type { Sql } from 'postgres';

/** A connection opened at most once: after it is lost, every query fails instead of reconnecting. */
export interface Client {
  readonly sql: Sql;
  /** True once the connection has closed (lost, or ended). */
  readonly lost: boolean;
}

/**
 * Opens the store's one connection (lazily: the first query connects). It never reconnects: a transaction whose
 * connection was lost must fail (the server rolled it back), not carry on in autocommit on a new connection.
 */
export function openClient(url: StoreUrl, opts: { connectTimeoutMs: number }): Client {
  const postgres = require('postgres') as typeof import('postgres');
  const net = require('node:net') as typeof import('node:net');
  let opened = false;
  const state = { lost: false };
  const socket = (o: { host: string[]; port: number[]; path?: string | false }) =>
    new Promise<import('node:net').Socket>((resolve, reject) => {
      if (opened) {
        reject(Object.assign(new Error('the connection was lost'), { code: 'CONNECTION_CLOSED' }));
        return;
      }
      opened = true;
      const s = o.path ? net.connect(o.path) : net.connect(o.port[0]!, o.host[0]!);
      s.setTimeout(opts.connectTimeoutMs, () => s.destroy(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' })));
      s.once('error', reject);
      s.once('connect', () => {
        s.setTimeout(0);
        s.removeListener('error', reject);
        resolve(s);
      });
    });
  const sql = postgres(url.connect, {
    max: 1,
    // Not in the typings, documented: a function that returns a connected socket.
    ...({ socket } as object),
    onclose: () => {
      state.lost = true;
    },
    // Array types are not used: fetching them costs a query on every connect.
    fetch_types: false,
    // Notices (`schema already exists`) are not crux's to print: stderr carries crux's own lines only.
    onnotice: () => {},
    connection: { application_name: 'crux' },
  });
  return {
    sql,
    get lost() {
      return state.lost;
    },
  };
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
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was lost',
  CONNECTION_CLOSED: 'the connection was lost',
  CONNECTION_DESTROYED: 'the connection was lost',
  CONNECTION_ENDED: 'the connection was lost',
};

/** Server errors (SQLSTATE) that mean "not now", each with what the message says. */
function sqlstateReason(code: string): string | undefined {
  if (code === '28P01' || code === '28000') return 'authentication refused';
  if (code === '3D000') return 'the database does not exist';
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'the server is shutting down or starting up';
  if (code === '53300') return 'the server has too many connections';
  if (code.startsWith('53')) return 'the server is out of resources (disk or memory)';
  if (code.startsWith('08')) return 'the connection failed';
  if (code === '40001' || code === '40P01') return 'a concurrent transaction conflicted';
  if (code === '25006') return 'the server is read-only (a standby?)';
  return undefined;
}

/**
 * The CruxError for a failure of the client or the server (exit 75, naming the server, never the password),
 * or undefined when the error is something else (a bug, which the caller rethrows as is).
 */
export function storeError(error: unknown, url: StoreUrl, lockTimeoutMs: number): CruxError | undefined {
  if (error instanceof CruxError || !(error instanceof Error)) return undefined;
  const code = String((error as { code?: unknown }).code ?? '');
  if (code === '55P03' || code === '57014') {
    return new CruxError(
      'lock_timeout',
      `the writers' lock of the store ${url.label} (schema ${url.schema}) was not free within ${lockTimeoutMs} ms`,
      'another crux process holds it; nothing was changed; safe to retry (CRUX_LOCK_TIMEOUT sets the wait)',
    );
  }
  const reason = UNREACHABLE[code] ?? sqlstateReason(code);
  if (reason === undefined) return undefined;
  const detail = code in UNREACHABLE ? '' : `: ${scrubText(error.message).replace(/\s+/g, ' ').slice(0, 200)}`;
  return new CruxError('store_unavailable', `cannot use the PostgreSQL store ${url.label}: ${reason}${detail.includes(reason) ? '' : detail}`);
}
