// A shared PostgreSQL store under stress: many writers, a writer killed mid-transaction, the server unreachable
// (75) or refusing for good (5), naming the server (never the password), nothing half-written. Frozen and
// restarted servers: pg-faults.test.ts (a cluster of its own).
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CRUX, FULL, crux as spawned, freshStore, journalRecords, type Run, snapshotDir, STRESS, storeArgs, tempDir, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { freshStoreUrl, pgPassword, pgServerUrl, pgSkipReason, psql } from '../helpers/pg';
import { sqlText } from '../helpers/pg-sql';
import { LOCK_CLASS, SCHEMA_VERSION } from '../../src/journal/pg/schema';
import { startShell, until } from './harness';

/** One line on stderr, exit 75, naming host:port, never the password. */
function expectTempFailure(run: Run, server: URL, password: string): void {
  expect(run.exitCode, run.stderr).toBe(75);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toContain(`${server.hostname}:${server.port}`);
  expect(run.stderr).not.toContain(password);
}

// On a data directory, concurrency.test.ts runs the same and more (the lock log, overlaps).
// Puts a writer: 8 in CI's run and the stress run, 2 in `npm test` (16 writers at once either way: each writer's
// second put contends again, after its first has released).
const PUTS = FULL ? 8 : 2;
describe.skipIf(pgSkipReason() !== undefined)(`16 concurrent writers on a pg store${pgSkipReason() ? ` (skipped: ${pgSkipReason()})` : ''}`, () => {
  const kind = 'pg' as const;
  it(`${16 * PUTS} puts from 16 processes: every one kept with its exact state, one unbroken chain`, async () => {
    const store = freshStore(kind);
    const at = kind === 'pg' ? `--store '${store}'` : `--data-dir '${store}'`;
    const writers = Array.from({ length: 16 }, (_, w) =>
      startShell(
        `for i in $(seq 1 ${PUTS}); do "$CRUX" ${at} session put "w${w}-$i" "{\\"w\\": ${w}, \\"i\\": $i.0}" >/dev/null || echo "fail w${w}-$i $?"; done`,
      ),
    );
    const exits = await Promise.all(writers.map((c) => c.done));
    expect(exits.map((e) => e.stdout).join('') + exits.map((e) => e.stderr).join('')).toBe('');
    const puts = journalRecords(store, 'sessions.jsonl').filter((r) => r.ev === 'session.put');
    expect(puts).toHaveLength(16 * PUTS);
    const list = JSON.parse((await crux(store, ['--json', 'session', 'list'])).stdout).sessions;
    expect(list).toHaveLength(16 * PUTS);
    for (const [w, i] of [
      [0, 1],
      [15, PUTS],
      [7, 2],
    ])
      expect((await crux(store, ['session', 'get', `w${w}-${i}`])).stdout).toBe(`{"w": ${w}, "i": ${i}.0}`);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});

describe.skipIf(pgSkipReason() !== undefined)('PostgreSQL failures', () => {
  it('a writer killed mid-transaction (rows in, not committed) leaves nothing, and the lock is free at once', async () => {
    const store = freshStoreUrl();
    expect((await crux(store, ['session', 'put', 'before', '{}'])).exitCode).toBe(0);
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ session_id: `i${i}`, state: { i } })).join('\n');
    const killed = await crux(store, ['session', 'import', '-'], { input: lines, env: { CRUX_TEST_CRASH_AT: 'pg-before-commit' } });
    expect(killed.exitCode).not.toBe(0);
    expect(journalRecords(store, 'sessions.jsonl')).toHaveLength(1);
    expect((await crux(store, ['session', 'get', 'i0'])).exitCode).toBe(3);
    const started = Date.now();
    expect((await crux(store, ['session', 'import', '-'], { input: lines, env: { CRUX_LOCK_TIMEOUT: '2s' } })).exitCode).toBe(0);
    if (STRESS) expect(Date.now() - started).toBeLessThan(2000);
    expect(journalRecords(store, 'sessions.jsonl')).toHaveLength(51);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  it('an unreachable server is exit 75 and a refused password exit 5, one line naming the server, never the password', async () => {
    const server = new URL(pgServerUrl());
    const refused = new URL(server.href);
    refused.port = String(Number(server.port) === 1 ? 2 : 1);
    const run = await crux(refused.href, ['session', 'list']);
    expectTempFailure(run, refused, pgPassword());
    expect(run.stderr).toMatch(/connection refused/);
    const wrong = new URL(server.href);
    wrong.password = 'wrong-password-123';
    const auth = await crux(wrong.href, ['session', 'put', 'a', '{}']);
    expect(auth.exitCode).toBe(5);
    expect(auth.stderr.trim().split('\n')).toHaveLength(1);
    expect(auth.stderr).toContain(`${server.hostname}:${server.port}/postgres (user postgres) refused the password`);
    expect(auth.stderr).not.toContain('wrong-password-123');
    // No such database, no such role: exit 5, naming what is missing and how to make it.
    const noDb = new URL(server.href);
    noDb.pathname = '/no_such_db';
    const missing = await crux(noDb.href, ['--json', 'session', 'list']);
    expect(missing.exitCode).toBe(5);
    expect(JSON.parse(missing.stderr).error).toMatchObject({
      code: 5,
      kind: 'store_refused',
      message: expect.stringContaining('has no database "no_such_db"'),
      hint: expect.stringContaining('createdb no_such_db'),
    });
    const socketDir = psql('show unix_socket_directories').trim().split(',')[0]!;
    const noRole = await crux(`postgres://ghost_role@/postgres?host=${socketDir}&port=${server.port}`, ['session', 'list']);
    expect(noRole.exitCode, noRole.stderr).toBe(5);
    expect(noRole.stderr).toMatch(/has no role "ghost_role".*createuser ghost_role/);
    const json = await crux(refused.href, ['--json', 'session', 'get', 'a']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 75, kind: 'store_unavailable' });
    expect(json.stderr).not.toContain(pgPassword());
    // CRUX_STORE names the store as --store does; a --data-dir flag wins over it.
    const viaEnv = await execa(CRUX, ['session', 'list'], { reject: false, env: testEnv({ CRUX_STORE: refused.href }), extendEnv: false });
    expectTempFailure({ exitCode: viaEnv.exitCode ?? -1, stdout: String(viaEnv.stdout), stderr: String(viaEnv.stderr) }, refused, pgPassword());
    const flagWins = await crux(freshStore('dir'), ['--json', 'session', 'list'], { env: { CRUX_STORE: refused.href } });
    expect(flagWins.exitCode, flagWins.stderr).toBe(0);
    const both = await crux(freshStore('dir'), ['--store', refused.href, 'session', 'list']);
    expect(both.exitCode).toBe(2);
  });

  it('a lock wait past CRUX_LOCK_TIMEOUT is exit 75 naming the server, and changes nothing', async () => {
    const store = freshStoreUrl();
    expect((await crux(store, ['session', 'put', 'a', '{"v":1}'])).exitCode).toBe(0);
    const holder = crux(store, ['session', 'put', 'a', '{"v":2}'], { env: { CRUX_TEST_LOCK_HOLD_MS: '3000' } });
    await new Promise((r) => setTimeout(r, 700));
    // Two processes: the waiter starts as late after the holder as a process does (on a loaded machine, after 700 ms).
    const waiter = await spawned(store, ['session', 'put', 'a', '{"v":3}'], { env: { CRUX_LOCK_TIMEOUT: '300ms' } });
    expectTempFailure(waiter, new URL(pgServerUrl()), pgPassword());
    expect(waiter.stderr).toMatch(/lock/);
    expect((await holder).exitCode).toBe(0);
    expect((await crux(store, ['session', 'get', 'a'])).stdout).toBe('{"v":2}');
  });

  it('doctor reports the server, the schema and its version, the journals and stranded sessions', async () => {
    const store = freshStoreUrl();
    const empty = JSON.parse((await crux(store, ['--json', 'doctor'])).stdout);
    expect(empty).toMatchObject({ healthy: true, data_dir: { exists: false }, server: { schema_version: 0 } });
    expect((await crux(store, ['--now', '2026-01-01T00:00:00Z', 'session', 'put', 'old', '{}'])).exitCode).toBe(0);
    const run = await crux(store, ['--json', '--now', '2026-06-01T00:00:00Z', 'doctor']);
    expect(run.exitCode, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.server).toMatchObject({
      schema: new URL(store).searchParams.get('schema'),
      schema_version: SCHEMA_VERSION,
      crux_schema_version: SCHEMA_VERSION,
    });
    expect(report.server.version).toMatch(/^\d+/);
    expect(report.journals.find((j: any) => j.name === 'sessions')).toMatchObject({ exists: true, records: 1, healthy: true });
    expect(report.sessions.stranded.map((s: any) => s.session_id)).toEqual(['old']);
    expect(run.stdout).not.toContain(pgPassword());
    expect(report.server.tables.map((t: any) => t.name)).toEqual(expect.arrayContaining(['journal_sessions', 'schema_version']));
    expect(report.server.last_compaction).toBeNull();
    // The handoff key is a row: no file mode, no mode warning.
    expect((await crux(store, ['--agent', 'x', 'session', 'put', 'p', '{}'])).exitCode).toBe(0);
    expect((await crux(store, ['--agent', 'x', 'handoff', 'mint', 'p', '--to', 'y'])).exitCode).toBe(0);
    expect((await crux(store, ['--now', '2026-06-01T00:00:00Z', 'journal', 'compact'])).exitCode).toBe(0);
    const after = JSON.parse((await crux(store, ['--json', '--now', '2026-06-01T00:00:00Z', 'doctor'])).stdout);
    expect(after.handoff_key).toMatchObject({ source: 'file', file: { exists: true, mode: null } });
    expect(after.findings.map((f: any) => f.code)).not.toContain('key_exposed');
    expect(after.server.last_compaction).toBe('2026-06-01T00:00:00.000Z');
    const human = await crux(store, ['doctor']);
    expect(human.stdout).toMatch(/server +PostgreSQL \d/);
    expect(human.stdout).toMatch(/handoff key .*keys\/handoff\.key \(a row of the store\)/);
    expect(human.stdout).not.toMatch(/readable by others|chmod/);
    expect(human.stdout).not.toContain(pgPassword());
  });

  it('a large import on PostgreSQL draws the same progress line on a terminal as on a data directory (one Reporter)', async () => {
    // The line shows once the work has run 1 s (or covered 50 000 records: src/output/progress.ts). Not 60 000
    // records' CPU: a batch of more than one insert statement (5 000 rows, src/journal/pg/pg-transaction.ts) whose
    // write waits past 1 s for the lock, which a writer killed after that hands over.
    const store = freshStoreUrl();
    const records = 6_000;
    const dir = tempDir();
    const file = join(dir, 'import.jsonl');
    writeFileSync(file, Array.from({ length: records }, (_, i) => `${JSON.stringify({ session_id: `s${i}`, state: { i } })}\n`).join(''));
    expect((await crux(store, ['session', 'put', 'first', '{}'])).exitCode).toBe(0);
    // This store's lock (other files' stores share the server): held, or waited for.
    const schema = new URL(store).searchParams.get('schema')!;
    const advisory = async (granted: boolean) =>
      (
        await sqlText(
          `select count(*) from pg_locks where locktype = 'advisory' and classid = ${LOCK_CLASS}::oid and objid = hashtext('${schema}')::oid and ${granted ? '' : 'not '}granted`,
        )
      ).trim() !== '0';
    const holder = execa(CRUX, [...storeArgs(store), 'session', 'put', 'holder', '{}'], {
      reject: false,
      env: testEnv({ CRUX_TEST_LOCK_HOLD_MS: '60000' }),
      extendEnv: false,
    });
    await until('the holder has the lock', () => advisory(true));
    const importing = execa('script', ['-qec', `${CRUX} --store '${store}' session import ${file}`, '/dev/null'], {
      reject: false,
      env: testEnv({ CRUX_LOCK_TIMEOUT: '60s' }),
      extendEnv: false,
      stdin: 'ignore',
    });
    await until('the import waits for the lock', () => advisory(false));
    await new Promise((r) => setTimeout(r, 1100));
    holder.kill('SIGKILL');
    expect((await holder).signal).toBe('SIGKILL');
    const run = await importing;
    expect(run.exitCode, String(run.stdout)).toBe(0);
    expect(String(run.stdout)).toMatch(/\r\x1b\[Kcrux: importing .*: \d+% writing the journal/);
    expect(psql(`select count(*) from ${schema}.journal_sessions`).trim()).toBe(String(records + 1));
  });

  it('refuses a schema a newer crux wrote on every command, for good (5), naming the crux that reads it, and changes nothing', async () => {
    const store = freshStoreUrl();
    expect((await crux(store, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    psql(`insert into ${new URL(store).searchParams.get('schema')}.schema_version (version, crux_version) values (999, '9.1.0')`);
    const before = snapshotDir(store);
    const commands = [
      ['session', 'put', 'a', '{"x":1}'],
      ['session', 'get', 'a'],
      ['session', 'list'],
      ['session', 'history', 'a'],
      ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
      ['case', 'retrieve', 't'],
      ['handoff', 'list'],
      ['journal', 'check'],
      ['store', 'init'],
    ];
    for (const args of commands) {
      const run = await crux(store, args);
      expect({ args, exitCode: run.exitCode }).toEqual({ args, exitCode: 5 });
      expect(run.stderr).toMatch(
        /schema version 999, newer than this crux understands \(\d+\); crux 9\.1\.0 wrote it and reads it \(run crux 9\.1\.0 or a newer one here; nothing was changed\)/,
      );
    }
    const json = await crux(store, ['session', 'get', 'a', '--json']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 5, kind: 'invalid_input' });
    expect(snapshotDir(store)).toEqual(before);
  });
});
