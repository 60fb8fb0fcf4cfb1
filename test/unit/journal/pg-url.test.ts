// Store URLs: the schema parameter, the label messages use (never the password), and refusals.
import { describe, expect, it } from 'vitest';
import { isPostgresUrl, parseStoreUrl } from '../../../src/journal/pg/url';
import { storeError } from '../../../src/journal/pg/client';

describe('parseStoreUrl', () => {
  it('takes the schema out of the URL the client gets, and names the server without the password', () => {
    const url = parseStoreUrl('postgres://ops:s3cret@db.example:6432/agents?schema=team_a&sslmode=require');
    expect(url).toEqual({
      // The client is handed the server it tries as options (client.ts): a placeholder host stands in the URL.
      connect: 'postgres://ops:s3cret@localhost/agents?sslmode=require',
      hosts: [{ host: 'db.example', port: 6432, name: 'db.example:6432' }],
      targetSessionAttrs: 'any',
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
      hosts: [{ host: '/run/postgresql', port: 5432, name: '/run/postgresql/.s.PGSQL.5432' }],
      label: 'postgres:///db?host=/run/postgresql',
      server: 'postgres:///db?host=/run/postgresql (user kim)',
    });
  });

  it('takes several hosts as libpq spells them, with target_session_attrs, naming every host and never the password', () => {
    const url = parseStoreUrl('postgres://ops:s3cret@h1:5432,h2:5433,[::1]/agents?target_session_attrs=read-write&schema=team_a');
    expect(url.hosts).toEqual([
      { host: 'h1', port: 5432, name: 'h1:5432' },
      { host: 'h2', port: 5433, name: 'h2:5433' },
      { host: '::1', port: 5432, name: '[::1]:5432' },
    ]);
    expect(url.targetSessionAttrs).toBe('read-write');
    expect(url.label).toBe('postgres://ops@h1:5432,h2:5433,[::1]/agents?target_session_attrs=read-write');
    expect(url.server).toBe('postgres://h1:5432,h2:5433,[::1]/agents?target_session_attrs=read-write (user ops)');
    // crux picks the server itself: the client never sees the parameter (it would refuse `any`) nor the list.
    expect(url.connect).toBe('postgres://ops:s3cret@localhost/agents');
    for (const attrs of ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby']) {
      expect(parseStoreUrl(`postgres://h1,h2/db?target_session_attrs=${attrs}`).targetSessionAttrs).toBe(attrs);
    }
    // PGTARGETSESSIONATTRS when the URL says nothing; the URL wins over it.
    expect(parseStoreUrl('postgres://h1,h2/db', '--store', { PGTARGETSESSIONATTRS: 'primary' }).targetSessionAttrs).toBe('primary');
    expect(parseStoreUrl('postgres://h1,h2/db?target_session_attrs=any', '--store', { PGTARGETSESSIONATTRS: 'primary' }).targetSessionAttrs).toBe('any');
    // ?host= and ?port= lists (one port for all, or one each); PGHOST and PGPORT when the URL names no host.
    expect(parseStoreUrl('postgres:///db?host=a,b&port=7000').hosts.map((h) => h.name)).toEqual(['a:7000', 'b:7000']);
    expect(parseStoreUrl('postgres:///db?host=a,b&port=7000,7001').hosts.map((h) => h.name)).toEqual(['a:7000', 'b:7001']);
    expect(parseStoreUrl('postgres:///db', '--store', { PGHOST: 'p1,p2', PGPORT: '6000' }).hosts.map((h) => h.name)).toEqual(['p1:6000', 'p2:6000']);
    expect(parseStoreUrl('postgres://h1:1,h2/db', '--store', { PGPORT: '6000' }).hosts.map((h) => h.name)).toEqual(['h1:1', 'h2:5432']);
  });

  it('refuses a malformed host list, a port list that does not match, and an unknown target_session_attrs (exit 5)', () => {
    const cases: [string, NodeJS.ProcessEnv, RegExp][] = [
      ['postgres://u:pw@h1,,h2/db', {}, /not a valid URL: postgres:\/\/h1,,h2/],
      ['postgres://u:pw@h1:99999,h2/db', {}, /not a valid URL/],
      ['postgres://u:pw@h1:x,h2/db', {}, /not a valid URL/],
      ['postgres:///db?host=a,b,c&port=1,2', {}, /3 host\(s\) and 2 ports/],
      ['postgres://u:pw@h1,h2/db?target_session_attrs=master', {}, /target_session_attrs "master" is not one libpq knows/],
      ['postgres://u:pw@h1,h2/db', { PGTARGETSESSIONATTRS: 'rw' }, /"rw" \(PGTARGETSESSIONATTRS\)/],
    ];
    for (const [bad, env, want] of cases) {
      let error: any;
      try {
        parseStoreUrl(bad, '--store', env);
      } catch (e) {
        error = e;
      }
      expect(error?.exitCode, bad).toBe(5);
      expect(error.message, bad).toMatch(want);
      expect(error.message).not.toContain('pw');
    }
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
