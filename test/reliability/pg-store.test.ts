// A shared PostgreSQL store under stress: many writers, a writer killed mid-transaction, the server unreachable,
// refusing the password or restarted under load — exit 75 naming the server (never the password), nothing
// acknowledged lost, nothing half-written.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { CRUX, crux, freshStore, journalRecords, STORE_KINDS, testEnv, type Run } from '../helpers/cli';
import { freshStoreUrl, pgPassword, pgServerUrl, pgSkipReason, psql } from '../helpers/pg';
import { startShell, STRESS } from './harness';

const CLUSTER = resolve(__dirname, '../../.ci/pg-cluster');

/** One line on stderr, exit 75, naming host:port, never the password. */
function expectTempFailure(run: Run, server: URL, password: string): void {
  expect(run.exitCode, run.stderr).toBe(75);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toContain(`${server.hostname}:${server.port}`);
  expect(run.stderr).not.toContain(password);
}

// On a data directory, concurrency.test.ts runs the same and more (the lock log, overlaps).
describe.each(STORE_KINDS.filter((k) => k === 'pg'))('16 concurrent writers on a %s store', (kind) => {
  it('128 puts from 16 processes: every one kept with its exact state, one unbroken chain', async () => {
    const store = freshStore(kind);
    const at = kind === 'pg' ? `--store '${store}'` : `--data-dir '${store}'`;
    const writers = Array.from({ length: 16 }, (_, w) =>
      startShell(`for i in 1 2 3 4 5 6 7 8; do "$CRUX" ${at} session put "w${w}-$i" "{\\"w\\": ${w}, \\"i\\": $i.0}" >/dev/null || echo "fail w${w}-$i $?"; done`),
    );
    const exits = await Promise.all(writers.map((c) => c.done));
    expect(exits.map((e) => e.stdout).join('') + exits.map((e) => e.stderr).join('')).toBe('');
    const puts = journalRecords(store, 'sessions.jsonl').filter((r) => r.ev === 'session.put');
    expect(puts).toHaveLength(128);
    const list = JSON.parse((await crux(store, ['--json', 'session', 'list'])).stdout).sessions;
    expect(list).toHaveLength(128);
    for (const [w, i] of [[0, 1], [15, 8], [7, 4]]) expect((await crux(store, ['session', 'get', `w${w}-${i}`])).stdout).toBe(`{"w": ${w}, "i": ${i}.0}`);
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
    expect(Date.now() - started).toBeLessThan(2000);
    expect(journalRecords(store, 'sessions.jsonl')).toHaveLength(51);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  it('an unreachable server and a refused password are exit 75, one line naming the server, never the password', async () => {
    const server = new URL(pgServerUrl());
    const refused = new URL(server.href);
    refused.port = String(Number(server.port) === 1 ? 2 : 1);
    const run = await crux(refused.href, ['session', 'list']);
    expectTempFailure(run, refused, pgPassword());
    expect(run.stderr).toMatch(/connection refused/);
    const wrong = new URL(server.href);
    wrong.password = 'wrong-password-123';
    const auth = await crux(wrong.href, ['session', 'put', 'a', '{}']);
    expectTempFailure(auth, server, 'wrong-password-123');
    expect(auth.stderr).toMatch(/authentication refused/);
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
    const waiter = await crux(store, ['session', 'put', 'a', '{"v":3}'], { env: { CRUX_LOCK_TIMEOUT: '300ms' } });
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
    expect(report.server).toMatchObject({ schema: new URL(store).searchParams.get('schema'), schema_version: 1, crux_schema_version: 1 });
    expect(report.server.version).toMatch(/^\d+/);
    expect(report.journals.find((j: any) => j.name === 'sessions')).toMatchObject({ exists: true, records: 1, healthy: true });
    expect(report.sessions.stranded.map((s: any) => s.session_id)).toEqual(['old']);
    expect(run.stdout).not.toContain(pgPassword());
    const human = await crux(store, ['doctor']);
    expect(human.stdout).toMatch(/server +PostgreSQL \d/);
    expect(human.stdout).not.toContain(pgPassword());
  });

  it('refuses a schema a newer crux wrote, and changes nothing', async () => {
    const store = freshStoreUrl();
    expect((await crux(store, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    psql(`insert into ${new URL(store).searchParams.get('schema')}.schema_version (version, crux_version) values (999, 'future')`);
    const run = await crux(store, ['session', 'put', 'a', '{"x":1}']);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toMatch(/schema version 999, newer than this crux/);
  });
});

// Under CRUX_STRESS only: one run of the whole suite on a loaded machine (load average ~15) saw an acknowledged
// put missing from `session list` after the restart; not reproduced alone (7 runs) — open, see the report.
describe.skipIf(pgSkipReason() !== undefined || !STRESS)('the server restarted under load', () => {
  // A cluster of this test's own: restarting the run's shared server would cut other suites' connections.
  const dir = mkdtempSync(join(tmpdir(), 'crux-pg-restart-'));
  let server = '';
  beforeAll(() => {
    server = execFileSync(CLUSTER, ['start', dir], { encoding: 'utf8' }).trim();
  });
  afterAll(() => {
    execFileSync(CLUSTER, ['stop', dir]);
  });

  it('in-flight commands exit 75, nothing acknowledged is lost, the next ones succeed', async () => {
    const url = new URL(server);
    url.searchParams.set('schema', 'restart');
    const store = url.href;
    expect((await crux(store, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    // A writer inside its transaction (holding the lock 5 s) and 4 writers queued behind it when the server
    // restarts (-m fast): all of them in flight. The 4 go on putting afterwards.
    const holder = crux(store, ['session', 'put', 'holder', '{}'], { env: { CRUX_TEST_LOCK_HOLD_MS: '5000' } });
    const writers = Array.from({ length: 4 }, (_, w) =>
      startShell(`for i in $(seq 1 10); do "$CRUX" --store '${store}' session put "w${w}-$i" "{\\"i\\":$i}" >/dev/null 2>>'${dir}/w${w}.err'; echo "w${w}-$i $?"; done`, { CRUX_TEST_LOCK_HOLD_MS: '20' }),
    );
    const held = () => psql(`select count(*) from pg_locks where locktype = 'advisory' and granted`, server).trim() !== '0';
    for (let waited = 0; !held(); waited += 100) {
      if (waited > 20_000) throw new Error('the holder never took the lock');
      await new Promise((r) => setTimeout(r, 100));
    }
    execFileSync(CLUSTER, ['restart', dir]);
    expectTempFailure(await holder, url, new URL(server).password);
    const exits = await Promise.all(writers.map((c) => c.done));
    const results = exits.flatMap((e) => e.stdout.split('\n').filter(Boolean)).map((l) => l.split(' ') as [string, string]);
    const codes = new Set(results.map(([, rc]) => rc));
    expect([...codes].every((c) => c === '0' || c === '75'), [...codes].join(',')).toBe(true);
    const acknowledged = results.filter(([, rc]) => rc === '0').map(([id]) => id);
    expect(acknowledged.length).toBeGreaterThan(0);
    const listed = JSON.parse((await crux(store, ['--json', 'session', 'list'])).stdout).sessions.map((s: any) => s.session_id);
    for (const id of acknowledged) expect(listed, id).toContain(id);
    expect((await crux(store, ['session', 'put', 'after', '{}'])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});
