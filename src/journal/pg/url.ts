// A PostgreSQL store's URL: what crux connects to (one host or several, as libpq spells them), which schema holds
// its tables, and how messages name it.
import { invalid } from '../../shared/errors';

const DEFAULT_SCHEMA = 'crux';
const DEFAULT_PORT = 5432;
/** Schema names crux accepts: plain lower-case identifiers, so no SQL ever needs to quote one from input. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** libpq's target_session_attrs: which of the hosts named crux settles on (SPEC §11, "Several hosts"). */
const SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
export type SessionAttrs = (typeof SESSION_ATTRS)[number];

/** One server of the URL: a TCP host and port, or a Unix socket's directory (`host` starts with `/`) and port. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
  /** How messages name it: `host:port`, `[v6]:port`, or the socket file. */
  readonly name: string;
}

export interface StoreUrl {
  /** The URL handed to the client, without crux's own parameters (`schema`) and those crux acts on itself. */
  readonly connect: string;
  readonly schema: string;
  /** How every message names the store: `postgres://user@h1:5432,h2:5432/db`, never the password. */
  readonly label: string;
  /** How errors name the server: its URL without userinfo, and the user crux connects as (never the password). */
  readonly server: string;
  /** The user and database crux connects as (libpq's defaults filled in), for messages. */
  readonly user: string;
  readonly database: string;
  /** The connection is encrypted (sslmode other than disable): the client's frame watchdog cannot read it. */
  readonly tls: boolean;
  /** Every server the URL names, in the order crux tries them (libpq's). */
  readonly hosts: readonly ServerAddress[];
  /** Which server crux settles on: `?target_session_attrs=`, else PGTARGETSESSIONATTRS, else `any`. */
  readonly targetSessionAttrs: SessionAttrs;
}

/** Whether a --store / CRUX_STORE value names a PostgreSQL store. */
export const isPostgresUrl = (value: string): boolean => /^postgres(ql)?:\/\//i.test(value);

export function parseStoreUrl(value: string, what = '--store', env: NodeJS.ProcessEnv = process.env): StoreUrl {
  if (!isPostgresUrl(value)) {
    throw invalid(`${what} must be a postgres:// or postgresql:// URL`, 'for a data directory, use --data-dir');
  }
  const notValid = () => invalid(`${what} is not a valid URL: ${labelOfText(value)}`, 'postgres://user@host:5432/database?schema=crux');
  // The authority may name several hosts (`h1:5432,h2:5432`), which WHATWG URL does not parse: it is split here,
  // and the rest (userinfo, path, query) parsed under an http: stand-in with a placeholder host.
  const rest = value.replace(/^postgres(ql)?:\/\//i, '');
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  let url: URL;
  try {
    url = new URL(`http://${userinfo}no-host.invalid${end < 0 ? '' : rest.slice(end)}`);
  } catch {
    throw notValid();
  }
  const typed = hostList === '' ? [] : hostList.split(',').map((entry) => splitHost(entry) ?? throwing(notValid()));
  const schemas = url.searchParams.getAll('schema');
  if (schemas.length > 1) throw invalid(`${what} names the schema more than once`);
  const schema = schemas[0] ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw invalid(`the schema ${JSON.stringify(schema)} is not a lower-case identifier`, 'e.g. ?schema=crux or ?schema=team_a');
  }
  // `?host=` and `?port=` (libpq's spelling, lists too; a directory is a Unix socket's) win over the authority's.
  const hostParam = url.searchParams.get('host') ?? undefined;
  const portParam = url.searchParams.get('port') ?? undefined;
  const attrsParam = url.searchParams.get('target_session_attrs') ?? undefined;
  const attrs = attrsParam ?? (env.PGTARGETSESSIONATTRS || 'any');
  if (!(SESSION_ATTRS as readonly string[]).includes(attrs)) {
    throw invalid(
      `target_session_attrs ${JSON.stringify(attrs)}${attrsParam === undefined ? ' (PGTARGETSESSIONATTRS)' : ''} is not one libpq knows`,
      `give one of ${SESSION_ATTRS.join(', ')}`,
    );
  }
  for (const name of ['schema', 'host', 'port', 'target_session_attrs']) url.searchParams.delete(name);
  const hosts = addresses(typed, hostParam, portParam, env);
  // libpq's defaults, as the client applies them: the user from PGUSER or the login, the database named as the user.
  const user = decodeURIComponent(url.username) || env.PGUSER || loginName();
  const database = decodeURIComponent(url.pathname.slice(1)) || env.PGDATABASE || user;
  // Messages are scrubbed of URL userinfo (SPEC §7): the user is named beside the URL (`server`), not in it.
  const userPart = url.username === '' ? '' : `${url.username}@`;
  const path = url.pathname === '/' ? '' : url.pathname;
  const params = [
    hostParam !== undefined ? `host=${hostParam}` : '',
    portParam !== undefined ? `port=${portParam}` : '',
    attrsParam !== undefined ? `target_session_attrs=${attrsParam}` : '',
  ]
    .filter(Boolean)
    .join('&');
  const label = `postgres://${userPart}${hostList}${path}${params !== '' ? `${path === '' ? '/' : ''}?${params}` : ''}`;
  const server = `${label.replace(/\/\/[^/?#]*@/, '//')} (user ${user})`;
  const sslmode = url.searchParams.get('sslmode') ?? url.searchParams.get('ssl') ?? env.PGSSLMODE;
  const tls = sslmode !== null && sslmode !== undefined && sslmode !== 'disable' && sslmode !== 'false';
  const scheme = value.slice(0, value.indexOf(':'));
  // The client gets one host in the URL (it cannot parse an IPv6 list, nor a socket's directory): crux hands it
  // the server it tries as options (client.ts).
  const connect = `${scheme}:${url.href.slice('http:'.length).replace('no-host.invalid', 'localhost')}`;
  return { connect, schema, label, server, user, database, tls, hosts, targetSessionAttrs: attrs as SessionAttrs };
}

const throwing = (error: Error): never => {
  throw error;
};

/** One entry of the authority's host list: `host`, `host:port`, `[v6]`, `[v6]:port`; undefined when malformed. */
function splitHost(entry: string): { host: string; port?: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^[\]:@\s]+)(?::(\d{1,5}))?$/.exec(entry);
  if (match === null) return undefined;
  let host: string;
  try {
    host = decodeURIComponent(match[1]!.replace(/^\[|\]$/g, ''));
  } catch {
    return undefined;
  }
  if (match[2] === undefined) return { host };
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** The servers to try, in order: the authority's hosts or `?host=`'s (else PGHOST, else localhost), each with its port. */
function addresses(
  typed: { host: string; port?: number }[],
  hostParam: string | undefined,
  portParam: string | undefined,
  env: NodeJS.ProcessEnv,
): ServerAddress[] {
  const fromParam = hostParam ?? (typed.length === 0 ? env.PGHOST || undefined : undefined);
  const names = fromParam !== undefined ? fromParam.split(',').map((host) => ({ host }) as { host: string; port?: number }) : typed;
  if (names.length === 0) names.push({ host: 'localhost' });
  if (names.some((n) => n.host === '')) throw invalid(`an empty host in ${JSON.stringify(fromParam ?? '')}`, 'e.g. ?host=h1,h2 or ?host=/run/postgresql');
  const portText = portParam ?? (typed.every((n) => n.port === undefined) ? env.PGPORT || undefined : undefined);
  const ports = portText === undefined ? [] : portText.split(',');
  for (const p of ports) {
    if (!/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw invalid(`the port ${JSON.stringify(p)} is not a number`, 'e.g. ?port=5432');
  }
  if (ports.length > 1 && ports.length !== names.length) {
    throw invalid(`${names.length} host(s) and ${ports.length} ports`, 'give one port for every host, or one for all of them');
  }
  return names.map((n, i) => {
    const port = ports.length > 0 ? Number(ports[ports.length > 1 ? i : 0]) : (n.port ?? DEFAULT_PORT);
    const name = n.host.startsWith('/') ? `${n.host}/.s.PGSQL.${port}` : `${n.host.includes(':') ? `[${n.host}]` : n.host}:${port}`;
    return { host: n.host, port, name };
  });
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
