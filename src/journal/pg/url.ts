// A PostgreSQL store's URL: what crux connects to, which schema holds its tables, and how messages name it.
import { invalid } from '../../shared/errors';

const DEFAULT_SCHEMA = 'crux';
/** Schema names crux accepts: plain lower-case identifiers, so no SQL ever needs to quote one from input. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StoreUrl {
  /** The URL handed to the client, without crux's own parameters (`schema`). */
  readonly connect: string;
  readonly schema: string;
  /** How every message names the server: `postgres://user@host:port/db`, never the password. */
  readonly label: string;
  /** How errors name the server: its URL without userinfo, and the user crux connects as (never the password). */
  readonly server: string;
  /** The user and database crux connects as (libpq's defaults filled in), for messages. */
  readonly user: string;
  readonly database: string;
  /** The connection is encrypted (sslmode other than disable): the client's frame watchdog cannot read it. */
  readonly tls: boolean;
  /** The server named by `?host=` (a directory: its Unix socket), handed to the client as its host. */
  readonly host?: string;
  /** The port named by `?port=` (libpq's spelling; with a socket directory, it names the socket file). */
  readonly port?: number;
}

/** Whether a --store / CRUX_STORE value names a PostgreSQL store. */
export const isPostgresUrl = (value: string): boolean => /^postgres(ql)?:\/\//i.test(value);

export function parseStoreUrl(value: string, what = '--store', env: NodeJS.ProcessEnv = process.env): StoreUrl {
  if (!isPostgresUrl(value)) {
    throw invalid(`${what} must be a postgres:// or postgresql:// URL`, 'for a data directory, use --data-dir');
  }
  let url: URL;
  // An empty host (`postgres:///db?host=/run/postgresql`, libpq's spelling of a Unix socket) would make the
  // http: stand-in read the database as the host: parse it under a placeholder host instead.
  const rest = value.replace(/^postgres(ql)?:\/\//i, '');
  const noHost = /^([^/?#@]*@)?[/?#]/.test(rest) || rest === '' || /^[^/?#]*@$/.test(rest);
  try {
    // WHATWG URL parses unknown schemes without a host part; an http: stand-in gives host, port and userinfo.
    url = new URL(noHost ? `http://${rest.replace(/^([^/?#@]*@)?/, '$1no-host.invalid')}` : `http://${rest}`);
  } catch {
    throw invalid(`${what} is not a valid URL: ${labelOfText(value)}`, 'postgres://user@host:5432/database?schema=crux');
  }
  const schemas = url.searchParams.getAll('schema');
  if (schemas.length > 1) throw invalid(`${what} names the schema more than once`);
  const schema = schemas[0] ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw invalid(`the schema ${JSON.stringify(schema)} is not a lower-case identifier`, 'e.g. ?schema=crux or ?schema=team_a');
  }
  url.searchParams.delete('schema');
  // `?host=` names the server (a directory: its Unix socket), as libpq reads it; the client takes it as an option.
  const hostParam = url.searchParams.get('host') ?? undefined;
  const portParam = url.searchParams.get('port') ?? undefined;
  if (portParam !== undefined && !/^\d{1,5}$/.test(portParam)) throw invalid(`the port ${JSON.stringify(portParam)} is not a number`, 'e.g. ?port=5432');
  url.searchParams.delete('host');
  url.searchParams.delete('port');
  // libpq's defaults, as the client applies them: the user from PGUSER or the login, the database named as the user.
  const user = decodeURIComponent(url.username) || env.PGUSER || loginName();
  const database = decodeURIComponent(url.pathname.slice(1)) || env.PGDATABASE || user;
  // Messages are scrubbed of URL userinfo (SPEC §7): the user is named beside the URL (`server`), not in it.
  const hostPart = noHost ? '' : url.host;
  const userPart = url.username === '' ? '' : `${url.username}@`;
  const path = url.pathname === '/' ? '' : url.pathname;
  const params = [hostParam !== undefined ? `host=${hostParam}` : '', portParam !== undefined ? `port=${portParam}` : ''].filter(Boolean).join('&');
  const label = `postgres://${userPart}${hostPart}${path}${params !== '' ? `${path === '' ? '/' : ''}?${params}` : ''}`;
  const server = `${label.replace(/\/\/[^/?#]*@/, '//')} (user ${user})`;
  const sslmode = url.searchParams.get('sslmode') ?? url.searchParams.get('ssl') ?? env.PGSSLMODE;
  const tls = sslmode !== null && sslmode !== undefined && sslmode !== 'disable' && sslmode !== 'false';
  const scheme = value.slice(0, value.indexOf(':'));
  let connect = `${scheme}:${url.href.slice('http:'.length)}`;
  // The client reads a host-less URL as invalid: `localhost` stands in, and the `host` option (below) wins over it.
  if (noHost) connect = connect.replace('no-host.invalid', 'localhost');
  return {
    connect,
    schema,
    label,
    server,
    user,
    database,
    tls,
    ...(hostParam !== undefined ? { host: hostParam } : {}),
    ...(portParam !== undefined ? { port: Number(portParam) } : {}),
  };
}

function loginName(): string {
  try {
    return (require('node:os') as typeof import('node:os')).userInfo().username;
  } catch {
    return 'postgres';
  }
}

/** A URL that did not parse, named without anything that could be a password. */
function labelOfText(value: string): string {
  const at = value.lastIndexOf('@');
  const rest = at < 0 ? value.slice(value.indexOf('://') + 3) : value.slice(at + 1);
  return `postgres://${rest.split(/[/?#]/)[0]}`;
}
