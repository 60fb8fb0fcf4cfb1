// Faults of the server, told apart, on a cluster of this suite's own: a frozen server (every process SIGSTOPped)
// before and in the middle of a put ends in 75 within the bound (the real bound in CI, a shorter one in npm test);
// restarts under 4 writers (8 in CI) lose nothing that was acknowledged (one restart in npm test, three in CI's run);
// a COMMIT whose answer is lost is 75, never 0 (an acknowledgement is a COMMIT the server confirmed).
// The commands facing a fault are processes; the seeds and checks around them run in this process (run-cli.ts).
import { writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL, journalRecords, crux as spawned, tempDir, type Run } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { OwnCluster, pgSkipReason } from '../helpers/pg';
import { sqlText } from '../helpers/pg-sql';
import { startShell, STRESS, until } from './harness';

const LOCK_TIMEOUT_MS = 2000;
/** The client's bound on a silent server beyond the lock wait (src/journal/pg/client.ts, STALL_GRACE_MS). */
const STALL_GRACE_MS = 4000;
/**
 * What the commands facing a frozen server are given: in CI's run the real bounds (2 s of lock wait, then 4 s of
 * silence: 6 s a command); in npm test a 500 ms lock wait and 1.5 s of silence (the test hook
 * CRUX_TEST_STALL_GRACE_MS), the same watchdog met in 2 s.
 */
const FROZEN = FULL
  ? { lockMs: LOCK_TIMEOUT_MS, graceMs: STALL_GRACE_MS, env: { CRUX_LOCK_TIMEOUT: `${LOCK_TIMEOUT_MS}ms` } }
  : { lockMs: 500, graceMs: 1500, env: { CRUX_LOCK_TIMEOUT: '500ms', CRUX_TEST_STALL_GRACE_MS: '1500' } };

function expectUnavailable(run: Run, server: URL): void {
  expect(run.exitCode, run.stderr).toBe(75);
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toContain(`${server.hostname}:${server.port}`);
  expect(run.stderr).toContain(`(user ${server.username})`);
  expect(run.stderr).not.toContain(server.password);
}

describe.skipIf(pgSkipReason() !== undefined)('PostgreSQL server faults (a cluster of this suite)', () => {
  const cluster = new OwnCluster();
  beforeAll(() => {
    cluster.start();
  });
  afterAll(() => {
    cluster.stop();
  });
  const env = { CRUX_LOCK_TIMEOUT: `${LOCK_TIMEOUT_MS}ms` };
  // Over one kept connection (helpers/pg-sql.ts), not a psql a poll; a connection a restart cut answers "not yet".
  const lockHeld = async () =>
    (await sqlText(`select count(*) from pg_locks where locktype = 'advisory' and granted`, cluster.url).catch(() => '0')).trim() !== '0';

  it('a frozen server (every process stopped) ends a read and a write in 75, naming the server and its user', async () => {
    const store = cluster.freshStore();
    expect((await crux(store, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    try {
      cluster.freeze();
      for (const args of [
        ['session', 'list'],
        ['session', 'put', 'b', '{}'],
      ]) {
        const started = Date.now();
        const run = await spawned(store, args, { env: FROZEN.env });
        expectUnavailable(run, new URL(store));
        expect(run.stderr).toMatch(/stopped answering|timed out/);
        if (STRESS) expect(Date.now() - started).toBeLessThan(FROZEN.lockMs + FROZEN.graceMs + 3000);
      }
    } finally {
      cluster.thaw();
    }
    expect((await crux(store, ['session', 'get', 'b'])).exitCode).toBe(3);
    expect((await crux(store, ['session', 'put', 'b', '{}'])).exitCode).toBe(0);
  });

  it('a server frozen in the middle of a put (inside its transaction, holding the lock) ends it in 75, nothing committed', async () => {
    const store = cluster.freshStore();
    expect((await crux(store, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    const put = crux(store, ['session', 'put', 'mid', '{"v":1}'], { env: { ...FROZEN.env, CRUX_TEST_LOCK_HOLD_MS: '1500' } });
    await until('the put holds the lock', lockHeld);
    let run: Run;
    try {
      cluster.freeze();
      run = await put;
    } finally {
      cluster.thaw();
    }
    expectUnavailable(run, new URL(store));
    expect((await crux(store, ['session', 'get', 'mid'])).exitCode).toBe(3);
    expect(journalRecords(store, 'sessions.jsonl')).toHaveLength(1);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  it('a COMMIT whose answer is lost exits 75, never 0: only a COMMIT the server confirmed acknowledges a write', async () => {
    const store = cluster.freshStore();
    expect((await crux(store, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    const upstream = new URL(cluster.url);
    // A proxy that forwards everything, and once crux sends COMMIT, passes it on and cuts crux off before the answer.
    const proxy: Server = createServer((client: Socket) => {
      const server = connect(Number(upstream.port), upstream.hostname);
      client.on('data', (chunk) => {
        server.write(chunk);
        if (/commit/i.test(chunk.toString('latin1'))) client.destroy();
      });
      server.on('data', (chunk) => client.destroyed || client.write(chunk));
      client.on('error', () => server.destroy());
      client.on('close', () => setTimeout(() => server.destroy(), 2000));
      server.on('error', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const via = new URL(store);
      via.port = String((proxy.address() as { port: number }).port);
      const run = await spawned(via.href, ['session', 'put', 'lost-answer', '{}'], { env });
      expect(run.exitCode, run.stderr).toBe(75);
      expect(run.stderr).toMatch(/connection was (lost|reset)/);
    } finally {
      proxy.close();
    }
    // The server may have committed it (75 says "not acknowledged", not "absent"): retried, the put is idempotent.
    expect((await crux(store, ['session', 'put', 'lost-answer', '{}'])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  // Writers at once: 8 in CI's run, 4 in npm test (each a loop of processes for the whole test).
  const WRITERS = FULL ? 8 : 4;
  it(`restarts (-m fast) under ${WRITERS} writers: every exit 0 or 75, every acknowledged put present, none duplicated`, async () => {
    const store = cluster.freshStore('restart');
    expect((await crux(store, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    // The writers go on until told to stop (at most 400 puts each): a put the restart refuses ends in 75 at once,
    // and writers of a fixed count could spend all their puts in one restart's downtime and leave none to wait for.
    const stop = join(tempDir('crux-pg-restart-'), 'stop');
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      startShell(
        `for i in $(seq 1 400); do [ -e '${stop}' ] && break; "$CRUX" --store '${store}' session put "w${w}-$i" "{\\"i\\":$i}" >/dev/null 2>/dev/null; echo "w${w}-$i $?"; done`,
        env,
      ),
    );
    // One restart in npm test, three in CI's run (CRUX_TEST_FULL), eight under CRUX_STRESS.
    const restarts = STRESS ? 8 : FULL ? 3 : 1;
    for (let r = 0; r < restarts; r++) {
      await until('the writers are at work', lockHeld);
      cluster.restart();
    }
    await until('the writers are at work after the last restart', lockHeld);
    writeFileSync(stop, '');
    const exits = await Promise.all(writers.map((c) => c.done));
    const results = exits.flatMap((e) => e.stdout.split('\n').filter(Boolean)).map((l) => l.split(' ') as [string, string]);
    expect(results.length).toBeGreaterThanOrEqual(WRITERS);
    const codes = new Set(results.map(([, rc]) => rc));
    expect(
      [...codes].every((c) => c === '0' || c === '75'),
      [...codes].join(','),
    ).toBe(true);
    const acknowledged = results.filter(([, rc]) => rc === '0').map(([id]) => id);
    const puts = journalRecords(store, 'sessions.jsonl')
      .filter((r) => r.ev === 'session.put')
      .map((r) => r.data.id as string);
    const listed = new Set<string>(JSON.parse((await crux(store, ['--json', 'session', 'list'])).stdout).sessions.map((s: any) => s.session_id));
    if (STRESS)
      console.log(`restarts ${restarts}: ${acknowledged.length} acknowledged, ${results.length - acknowledged.length} exit 75, ${puts.length - 1} present`);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const id of acknowledged) expect(listed.has(id), id).toBe(true);
    expect(new Set(puts).size).toBe(puts.length);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});
