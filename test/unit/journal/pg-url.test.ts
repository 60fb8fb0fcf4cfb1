// Store URLs: the schema parameter, the label messages use (never the password), and refusals.
import { describe, expect, it } from 'vitest';
import { isPostgresUrl, parseStoreUrl } from '../../../src/journal/pg/url';
import { storeError } from '../../../src/journal/pg/client';

describe('parseStoreUrl', () => {
  it('takes the schema out of the URL the client gets, and names the server without the password', () => {
    const url = parseStoreUrl('postgres://ops:s3cret@db.example:6432/agents?schema=team_a&sslmode=require');
    expect(url).toEqual({
      connect: 'postgres://ops:s3cret@db.example:6432/agents?sslmode=require',
      schema: 'team_a',
      label: 'postgres://ops@db.example:6432/agents',
      server: 'postgres://db.example:6432/agents (user ops)',
      user: 'ops',
      database: 'agents',
      tls: true,
    });
    expect(parseStoreUrl('postgresql://h').schema).toBe('crux');
    // libpq's defaults named: the user (PGUSER, else the login) and the database (PGDATABASE, else the user).
    expect(parseStoreUrl('postgresql://h').label).toBe('postgres://h');
    expect(parseStoreUrl('postgresql://h', '--store', { PGUSER: 'kim' })).toMatchObject({ server: 'postgres://h (user kim)', database: 'kim' });
    expect(parseStoreUrl('postgresql://h/db', '--store', { PGUSER: 'kim' })).toMatchObject({ server: 'postgres://h/db (user kim)', tls: false });
    // A Unix socket, as libpq spells it: no host in the authority, the socket's directory as ?host=.
    expect(parseStoreUrl('postgres:///db?host=/run/postgresql', '--store', { PGUSER: 'kim' })).toMatchObject({
      connect: 'postgres://localhost/db',
      host: '/run/postgresql',
      label: 'postgres:///db?host=/run/postgresql',
      server: 'postgres:///db?host=/run/postgresql (user kim)',
    });
  });

  it('recognises both schemes, in any case', () => {
    expect(isPostgresUrl('postgres://h')).toBe(true);
    expect(isPostgresUrl('PostgreSQL://h')).toBe(true);
    expect(isPostgresUrl('/var/lib/crux')).toBe(false);
    expect(isPostgresUrl('mysql://h')).toBe(false);
  });

  it('refuses other schemes, bad schema names and repeated schemas (exit 5), quoting no password', () => {
    for (const bad of [
      'mysql://u:pw@h/x',
      'postgres://u:pw@h/x?schema=Team',
      'postgres://u:pw@h/x?schema=a;drop',
      'postgres://u:pw@h/x?schema=a&schema=b',
      'postgres://u:pw@[bad/x',
    ]) {
      let error: any;
      try {
        parseStoreUrl(bad);
      } catch (e) {
        error = e;
      }
      expect(error?.exitCode, bad).toBe(5);
      expect(error.message).not.toContain('pw');
    }
  });
});

describe('storeError', () => {
  const url = parseStoreUrl('postgres://ops:s3cret@db.example:6432/agents');
  const failing = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('maps unreachable, silent and restarting servers, lost connections and lock waits to exit 75', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'CONNECT_TIMEOUT', 'SERVER_SILENT', 'CONNECTION_CLOSED', '57P01', '08006', '53300', '55P03', '57014']) {
      const error = storeError(failing(code, 'password authentication failed for user "ops"'), url, 10_000);
      expect(error?.exitCode, code).toBe(75);
      expect(error!.message).toContain('db.example:6432/agents (user ops)');
      expect(error!.message).not.toContain('s3cret');
    }
    expect(storeError(failing('55P03'), url, 250)!.kind).toBe('lock_timeout');
  });

  it('maps refusals that retrying cannot change to exit 5, naming what is missing and the fix, never the password', () => {
    const cases: [string, string, RegExp][] = [
      ['28P01', 'password authentication failed for user "ops"', /refused the password: password authentication failed for user "ops".*PGPASSWORD/],
      ['28000', 'role "ghost" does not exist', /has no role "ghost".*createuser ghost/],
      ['28000', 'no pg_hba.conf entry for host "10.0.0.1"', /\(user ops\) does not let the user in.*pg_hba\.conf/],
      ['3D000', 'database "agents" does not exist', /has no database "agents".*createdb agents/],
    ];
    for (const [code, message, want] of cases) {
      const error = storeError(failing(code, message), url, 10_000)!;
      expect(error.exitCode, code).toBe(5);
      expect(`${error.message} (${error.hint})`).toMatch(want);
      expect(error.message).toContain('postgres://db.example:6432/agents (user ops)');
      expect(error.message + error.hint).not.toContain('s3cret');
    }
  });

  it('leaves other errors alone (bugs stay bugs)', () => {
    expect(storeError(failing('42601'), url, 1000)).toBeUndefined();
    expect(storeError(new TypeError('x'), url, 1000)).toBeUndefined();
  });
});
