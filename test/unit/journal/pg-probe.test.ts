// The servers doctor's probe tries for a PostgreSQL store it cannot use, as the URL names them (libpq's spellings),
// and the probe itself against a local port nothing listens on.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { probeStore } from '../../../src/journal/pg/probe';
import { parseStoreUrl } from '../../../src/journal/pg/url';

const of = (url: string, env: NodeJS.ProcessEnv = {}) => parseStoreUrl(url, '--store', { PGUSER: 'kim', ...env }).hosts;

describe('the servers the probe tries', () => {
  it('reads a host, IPv6, the default port and PGPORT, and a Unix socket directory', () => {
    expect(of('postgres://u:pw@db.example:6432/x')).toEqual([{ host: 'db.example', port: 6432, name: 'db.example:6432' }]);
    expect(of('postgres://u@db.example/x')).toEqual([{ host: 'db.example', port: 5432, name: 'db.example:5432' }]);
    expect(of('postgres://u@db.example/x', { PGPORT: '7000' })).toEqual([{ host: 'db.example', port: 7000, name: 'db.example:7000' }]);
    expect(of('postgres://u@[::1]:5433/x')).toEqual([{ host: '::1', port: 5433, name: '[::1]:5433' }]);
    expect(of('postgres:///db?host=/run/postgresql&port=5433')).toEqual([{ host: '/run/postgresql', port: 5433, name: '/run/postgresql/.s.PGSQL.5433' }]);
  });
});

describe('probeStore', () => {
  it('stops at the port nothing listens on, names the user, never the password', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const checks = await probeStore(parseStoreUrl(`postgres://ops:pw-secret@127.0.0.1:${port}/memory`), { timeoutMs: 2000, env: {} });
    expect(checks).toEqual([
      { check: 'url', status: 'ok', detail: `server 127.0.0.1:${port}, database memory, user ops, schema crux, no TLS` },
      { check: 'host', status: 'ok', detail: '127.0.0.1 is an address' },
      { check: 'port', status: 'failed', detail: `127.0.0.1:${port} refused: no server listens there` },
      { check: 'login', status: 'skipped', detail: 'no server took the connection' },
    ]);
    expect(JSON.stringify(checks)).not.toContain('pw-secret');
  });

  it('a socket directory with no server in it: the socket is named, the port failed', async () => {
    const checks = await probeStore(parseStoreUrl('postgres:///db?host=/nonexistent-crux-dir', '--store', { PGUSER: 'kim' }), { timeoutMs: 2000, env: {} });
    expect(checks.map((c) => c.status)).toEqual(['ok', 'ok', 'failed', 'skipped']);
    expect(checks[2]!.detail).toBe('/nonexistent-crux-dir/.s.PGSQL.5432: no socket there: no server listens on it');
  });
});
