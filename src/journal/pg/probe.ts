// What `crux doctor` can still find out about a PostgreSQL store it cannot use: the URL as crux reads it, whether
// each host resolves, whether its port takes a connection, and whether the server lets the user in. Each step is
// bounded; a step whose ground failed is skipped. Never the password.
import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';
import { scrubText } from '../../shared/scrub';
import { openClient, storeError } from './client';
import type { ServerAddress, StoreUrl } from './url';

export interface ProbeCheck {
  readonly check: 'url' | 'host' | 'port' | 'login';
  readonly status: 'ok' | 'failed' | 'skipped';
  readonly detail: string;
}

/** At most this many servers of a multi-host URL are probed (the first, in the order crux tries them). */
const MAX_SERVERS = 4;

/** A Unix-domain socket's server (a host that is a directory): its name is the socket's path. */
const isSocket = (server: ServerAddress): boolean => server.host.startsWith('/');

const reasonOf = (error: unknown): string => {
  const code = String((error as { code?: unknown }).code ?? '');
  const known: Record<string, string> = {
    ENOTFOUND: 'no such host',
    EAI_AGAIN: 'the name server did not answer (try again)',
    ECONNREFUSED: 'refused: no server listens there',
    ETIMEDOUT: 'timed out',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    ENOENT: 'no socket there: no server listens on it',
    EACCES: 'permission denied',
  };
  return known[code] ?? scrubText(error instanceof Error ? error.message : String(error));
};

/** A TCP (or Unix-socket) connection to `server` (at `address`), closed at once: undefined when it was taken, else why not. */
function tryConnect(server: ServerAddress, address: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = isSocket(server) ? connect(server.name) : connect(server.port, address);
    const done = (why: string | undefined) => {
      s.destroy();
      resolve(why);
    };
    s.setTimeout(timeoutMs, () => done(`timed out after ${timeoutMs} ms (a firewall dropping packets, or a server that does not answer)`));
    s.once('error', (error) => done(reasonOf(error)));
    s.once('connect', () => done(undefined));
  });
}

/** The checks, in order; every network step ends within `timeoutMs`. */
export async function probeStore(url: StoreUrl, opts: { timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<ProbeCheck[]> {
  const servers = url.hosts.slice(0, MAX_SERVERS);
  const where = servers.map((e) => e.name).join(', ');
  const checks: ProbeCheck[] = [
    {
      check: 'url',
      status: 'ok',
      detail: `server ${where}, database ${url.database}, user ${url.user}, schema ${url.schema}, ${url.tls ? 'TLS' : 'no TLS'}`,
    },
  ];
  // Each server: its addresses, then a connection to the first of them.
  const reachable: ServerAddress[] = [];
  const resolved: string[] = [];
  const refused: string[] = [];
  let anyResolved = false;
  for (const e of servers) {
    if (isSocket(e)) {
      anyResolved = true;
      resolved.push(`${e.name} is a local socket`);
      const why = await tryConnect(e, '', opts.timeoutMs);
      if (why === undefined) reachable.push(e);
      else refused.push(`${e.name}: ${why}`);
      continue;
    }
    let addresses: string[];
    try {
      addresses = (await withTimeout(lookup(e.host, { all: true }), opts.timeoutMs)).map((a) => a.address);
      anyResolved = true;
      resolved.push(addresses.includes(e.host) ? `${e.host} is an address` : `${e.host} resolves to ${addresses.join(', ')}`);
    } catch (error) {
      resolved.push(`${e.host}: ${reasonOf(error)}`);
      continue;
    }
    const why = await tryConnect(e, addresses[0]!, opts.timeoutMs);
    if (why === undefined) reachable.push(e);
    else refused.push(`${addresses[0]!.includes(':') ? `[${addresses[0]}]` : addresses[0]}:${e.port} ${why}`);
  }
  checks.push({ check: 'host', status: anyResolved ? 'ok' : 'failed', detail: resolved.join('; ') });
  if (!anyResolved) {
    checks.push({ check: 'port', status: 'skipped', detail: 'no host resolved' }, { check: 'login', status: 'skipped', detail: 'no host resolved' });
    return checks;
  }
  checks.push({
    check: 'port',
    status: reachable.length > 0 ? 'ok' : 'failed',
    detail:
      reachable.length > 0
        ? `${reachable.map((e) => e.name).join(', ')} takes connections${refused.length ? `; ${refused.join('; ')}` : ''}`
        : refused.join('; '),
  });
  if (reachable.length === 0) {
    checks.push({ check: 'login', status: 'skipped', detail: 'no server took the connection' });
    return checks;
  }
  checks.push(await tryLogin(url, reachable[0]!, opts.timeoutMs));
  return checks;
}

/** Logs in as the URL's user (one statement, then the connection ends): the server's answer, never the password. */
async function tryLogin(url: StoreUrl, address: ServerAddress, timeoutMs: number): Promise<ProbeCheck> {
  const client = openClient(url, { lockTimeoutMs: timeoutMs, address });
  try {
    await withTimeout(client.sql`select 1`, timeoutMs + 1000);
    return { check: 'login', status: 'ok', detail: `the server lets user ${url.user} into database ${url.database}` };
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? '');
    const what =
      code === '28P01'
        ? `authentication failed for user ${url.user}`
        : code === '28000'
          ? `the server does not let user ${url.user} in (no such role, or pg_hba.conf)`
          : code === '3D000'
            ? `user ${url.user} logged in, but there is no database ${url.database}`
            : (storeError(error, url, timeoutMs)?.message ?? reasonOf(error));
    return { check: 'login', status: 'failed', detail: scrubText(what) };
  } finally {
    await client.end(0).catch(() => {});
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`timed out after ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
