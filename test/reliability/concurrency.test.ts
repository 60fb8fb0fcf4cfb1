// Many writers at once: nothing lost, nothing duplicated, the chain stays valid, no two lock holders overlap,
// waits are bounded (exit 75 only past CRUX_LOCK_TIMEOUT), and a killed holder hands the lock over at once. The
// writers, waiters and racers are processes; what seeds a store and reads it after them runs in this process.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock, type HeldLock } from '../../src/journal/dir/lock/lock';
import { describeEachStore, freshDataDir, freshStore, FULL, snapshotDir, crux as spawned, STRESS, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectHealthy, figure, journalRecords, percentile, pool, readSessions, scaled, sleep, startCrux, startShell, type Child, TIMEOUT } from './harness';
import { findOverlaps, parseLockLog, untilEntered } from './lock-log';

const WRITERS = 16;

/** One writer: a shell loop of puts and case records; prints `<kind> <id> <exit> <ms> [case id]` per command. */
function writerScript(dataDir: string, w: number, puts: number): string {
  return `
for i in $(seq 1 ${puts}); do
  t0=$(date +%s%N)
  "$CRUX" --data-dir '${dataDir}' session put "w${w}-$i" "{\\"w\\":${w},\\"i\\":$i}" >/dev/null 2>>'${dataDir}.w${w}.err'
  rc=$?; t1=$(date +%s%N); echo "put w${w}-$i $rc $(( (t1 - t0) / 1000000 ))"
  if [ $((i % 2)) -eq 0 ]; then
    t0=$(date +%s%N)
    out=$("$CRUX" --data-dir '${dataDir}' case record --task "deploy w${w}x$i" --action a --outcome o 2>>'${dataDir}.w${w}.err')
    rc=$?; t1=$(date +%s%N); echo "case w${w}x$i $rc $(( (t1 - t0) / 1000000 )) $out"
  fi
done`;
}

/** This test process takes the data directory's lock, as a writer elsewhere would. */
const holdLock = (dataDir: string): Promise<HeldLock> => acquireLock(dataDir, 1000);

describe('concurrent writers', { timeout: TIMEOUT }, () => {
  it(`${WRITERS} processes writing at once lose nothing, duplicate nothing, and keep the chain valid`, async () => {
    const dir = freshDataDir();
    const lockLog = join(tempDir(), 'lock.log');
    // Puts a writer (a case record after each second one): 2 in npm test, 3 in CI's run, 40 under CRUX_STRESS.
    const puts = STRESS ? 40 : FULL ? 3 : 2;
    const started = performance.now();
    const writers = Array.from({ length: WRITERS }, (_, w) => startShell(writerScript(dir, w, puts), { CRUX_TEST_LOCK_LOG: lockLog }));
    const exits = await Promise.all(writers.map((c) => c.done));
    const wallMs = performance.now() - started;
    const results = exits
      .flatMap((e) => e.stdout.split('\n').filter(Boolean))
      .map((line) => {
        const [kind, id, rc, ms, caseId] = line.split(' ');
        return { kind: kind!, id: id!, rc: Number(rc), ms: Number(ms), caseId };
      });
    const failures = results.filter((r) => r.rc !== 0);
    const errs = Array.from({ length: WRITERS }, (_, w) => `${dir}.w${w}.err`)
      .filter(fs.existsSync)
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('');
    expect(failures, errs).toEqual([]);
    const putIds = results.filter((r) => r.kind === 'put').map((r) => r.id);
    const cases = results.filter((r) => r.kind === 'case');
    expect(putIds).toHaveLength(WRITERS * puts);

    // Nothing lost: every acknowledged put is there with its exact state; nothing duplicated: one record each.
    const sessions = readSessions(dir);
    for (const id of putIds) {
      const [, w, i] = /^w(\d+)-(\d+)$/.exec(id)!;
      expect(sessions.get(id as never)?.state, id).toBe(`{"w":${w},"i":${i}}`);
    }
    const putRecords = journalRecords(join(dir, 'sessions.jsonl')).filter((r) => r.ev === 'session.put');
    expect(putRecords.length).toBe(putIds.length);
    expect(new Set(putRecords.map((r) => r.data.id)).size).toBe(putIds.length);
    const caseRecords = journalRecords(join(dir, 'cases.jsonl')).filter((r) => r.ev === 'case.recorded');
    expect(caseRecords.map((r) => r.data.case_id).sort()).toEqual(cases.map((c) => c.caseId).sort());
    expect(new Set(caseRecords.map((r) => r.data.task)).size).toBe(cases.length);
    for (const path of ['sessions.jsonl', 'cases.jsonl']) {
      expect(journalRecords(join(dir, path)).map((r) => r.seq)).toEqual(Array.from({ length: journalRecords(join(dir, path)).length }, (_, i) => i + 1));
    }
    await expectHealthy(dir);

    // No two holders overlapped.
    const { overlaps, sections } = findOverlaps(parseLockLog(fs.readFileSync(lockLog, 'utf8')));
    expect(overlaps).toEqual([]);
    expect(sections).toBeGreaterThanOrEqual(results.length);

    const latencies = results.map((r) => r.ms);
    figure('concurrent-writers', {
      writers: WRITERS,
      commands: results.length,
      puts: putIds.length,
      case_records: cases.length,
      lost: 0,
      duplicated: 0,
      wall_s: Math.round(wallMs / 100) / 10,
      commands_per_s: Math.round((results.length / wallMs) * 1000 * 10) / 10,
      latency_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies) },
      lock_sections: sections,
      overlaps: 0,
    });
  });

  it('handoff accepts racing with puts and case records: each package accepted exactly once, nothing lost', async () => {
    const dir = freshDataDir();
    const packages = 4;
    const envelopes: string[] = [];
    for (let p = 0; p < packages; p++) {
      expect((await crux(dir, ['--agent', 'alice', 'session', 'put', `h${p}`, `{"p":${p}}`])).exitCode).toBe(0);
      const mint = await crux(dir, ['--json', 'handoff', 'mint', `h${p}`, '--from', 'alice', '--to', 'bob']);
      expect(mint.exitCode, mint.stderr).toBe(0);
      envelopes.push(mint.stdout);
    }
    // 16 processes at once: 3 accepts of each package (12) and 4 other writers.
    const accepts = envelopes.flatMap((env, p) =>
      Array.from({ length: 3 }, () => ({ p, child: startCrux(dir, ['handoff', 'accept', '-', '--as', 'bob'], {}, env) })),
    );
    const others = Array.from({ length: 4 }, (_, w) =>
      w % 2
        ? startCrux(dir, ['session', 'put', `o${w}`, `{"w":${w}}`])
        : startCrux(dir, ['case', 'record', '--task', `race ${w}`, '--action', 'a', '--outcome', 'o']),
    );
    const results = await Promise.all(accepts.map(async ({ p, child }) => ({ p, exit: await child.done })));
    for (const o of others) expect((await o.done).code).toBe(0);
    for (let p = 0; p < packages; p++) {
      const codes = results
        .filter((r) => r.p === p)
        .map((r) => r.exit.code)
        .sort();
      expect(codes, results.map((r) => r.exit.stderr).join('')).toEqual([0, 8, 8]);
    }
    const consumed = journalRecords(join(dir, 'handoffs.jsonl')).filter((r) => /accept/.test(r.ev));
    expect(consumed).toHaveLength(packages);
    for (let p = 0; p < packages; p++) {
      expect(await crux(dir, ['--agent', 'bob', 'session', 'get', `h${p}`])).toMatchObject({ exitCode: 0, stdout: `{"p":${p}}` });
    }
    await expectHealthy(dir);
  });

  it('a writer that cannot take the lock within CRUX_LOCK_TIMEOUT exits 75 with a clear message and changes nothing', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{"n":1}'])).exitCode).toBe(0);
    const before = snapshotDir(dir);
    const server = await holdLock(dir);
    try {
      const commands: string[][] = [
        ['session', 'put', 'a', '{"n":2}'],
        ['session', 'put', 'b', '{"n":3}'],
        ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
        ['journal', 'compact'],
        ['journal', 'check', '--repair'],
      ];
      const runs = await Promise.all(
        commands.map(async (args) => {
          const t0 = performance.now();
          const run = await spawned(dir, args, { env: { CRUX_LOCK_TIMEOUT: '1s' } });
          return { args, run, ms: performance.now() - t0 };
        }),
      );
      for (const { args, run, ms } of runs) {
        expect(run.exitCode, args.join(' ')).toBe(75);
        expect(run.stderr).toMatch(/^crux: the data directory is locked by another crux process \(waited 1 s\).*\(safe to retry/);
        expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
        expect(ms).toBeGreaterThanOrEqual(1000);
        if (STRESS) expect(ms).toBeLessThan(5000);
      }
      const json = await spawned(dir, ['--json', 'session', 'put', 'a', '{}'], { env: { CRUX_LOCK_TIMEOUT: '1s' } });
      expect(json.exitCode).toBe(75);
      expect(JSON.parse(json.stderr).error).toMatchObject({ code: 75, kind: 'lock_timeout' });
      expect(snapshotDir(dir)).toEqual(before);
      // Reads never wait for the lock.
      expect(await spawned(dir, ['session', 'get', 'a'])).toMatchObject({ exitCode: 0, stdout: '{"n":1}' });
    } finally {
      await server.release();
    }
    expect((await crux(dir, ['session', 'put', 'a', '{"n":2}'], { env: { CRUX_LOCK_TIMEOUT: '1s' } })).exitCode).toBe(0);
  });

  it('a writer that waits less than CRUX_LOCK_TIMEOUT succeeds (exit 75 only past the bound)', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    const server = await holdLock(dir);
    const t0 = performance.now();
    const writer = spawned(dir, ['session', 'put', 'b', '{"n":1}'], { env: { CRUX_LOCK_TIMEOUT: '5s' } });
    await sleep(1500);
    await server.release();
    const run = await writer;
    const ms = performance.now() - t0;
    expect(run.exitCode, run.stderr).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(1500);
    expect(readSessions(dir).get('b' as never)?.state).toBe('{"n":1}');
  });
});

describe('killing the lock holder', { timeout: TIMEOUT }, () => {
  it('the overlap check itself catches an overlap (it can fail)', () => {
    const log = (lines: string[]) => findOverlaps(parseLockLog(lines.map((l, i) => `${l} ${i}`).join('\n'))).overlaps;
    expect(log(['enter 1', 'exit 1', 'enter 2', 'exit 2'])).toEqual([]);
    expect(log(['enter 1', 'kill 1', 'enter 2', 'exit 2'])).toEqual([]);
    expect(log(['enter 1', 'enter 2', 'exit 2', 'exit 1'])).toHaveLength(2);
    expect(log(['enter 1', 'enter 2', 'kill 1', 'exit 2'])).toHaveLength(1);
  });

  it('no two holders overlap while holders are SIGKILLed at random moments; every acknowledged write survives', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    const lockLog = join(tempDir(), 'lock.log');
    const total = scaled(24, 240);
    const acked: string[] = [];
    let kills = 0;
    await pool(
      Array.from({ length: total }, (_, i) => i),
      12,
      async (i) => {
        // A stay inside the lock widens the critical section, so an overlap would show. Every third process is
        // killed: half of those at a random moment, half once the log shows them inside the lock.
        const insideKill = i % 6 === 0;
        const randomKill = i % 6 === 3;
        const hold = insideKill ? 30 + Math.floor(Math.random() * 30) : i % 5;
        const child = startCrux(dir, ['session', 'put', `k${i}`, `{"i":${i}}`], { CRUX_TEST_LOCK_LOG: lockLog, CRUX_TEST_LOCK_HOLD_MS: String(hold) });
        const alive = () => child.proc.exitCode === null && child.proc.signalCode === null;
        let killed = false;
        const kill = () => {
          if (!alive()) return;
          fs.appendFileSync(lockLog, `kill ${child.proc.pid} ${process.hrtime.bigint()}\n`);
          killed = child.proc.kill('SIGKILL');
        };
        if (randomKill) setTimeout(kill, 40 + Math.random() * 200);
        if (insideKill) {
          void (async () => {
            await untilEntered(lockLog, child.proc.pid, 2, alive);
            await sleep(Math.random() * hold * 0.8);
            kill();
          })();
        }
        const exit = await child.done;
        if (exit.code === 0) acked.push(`k${i}`);
        else {
          expect(exit.signal, exit.stderr).toBe('SIGKILL');
          expect(killed).toBe(true);
          kills += 1;
        }
      },
    );
    const log = parseLockLog(fs.readFileSync(lockLog, 'utf8'));
    const { overlaps, sections, killedInside } = findOverlaps(log);
    expect(overlaps).toEqual([]);
    expect(kills).toBeGreaterThan(0);
    expect(killedInside).toBeGreaterThan(0);
    const sessions = readSessions(dir);
    for (const id of acked) expect(sessions.get(id as never)?.state, id).toBe(`{"i":${id.slice(1)}}`);
    await expectHealthy(dir);
    figure('lock-no-overlap', {
      commands: total,
      killed: kills,
      killed_inside_lock: killedInside,
      sections,
      overlaps: overlaps.length,
      acked: acked.length,
      lost: 0,
    });
  });

  it('a holder killed with SIGKILL hands the lock to a waiter at once (measured)', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    const rounds = scaled(3, 30);
    const handovers: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const lockLog = join(tempDir(), 'lock.log');
      const victim = startCrux(dir, ['session', 'put', `victim${r}`, '{}'], { CRUX_TEST_LOCK_LOG: lockLog, CRUX_TEST_LOCK_HOLD_MS: '60000' });
      await untilEntered(lockLog, victim.proc.pid);
      const waiters: Child[] = Array.from({ length: 4 }, (_, w) =>
        startCrux(dir, ['session', 'put', `r${r}w${w}`, `{"w":${w}}`], { CRUX_TEST_LOCK_LOG: lockLog, CRUX_LOCK_TIMEOUT: '30s' }),
      );
      await sleep(700); // the waiters are up and polling at their longest back-off
      expect(fs.readFileSync(lockLog, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
      const killedAt = process.hrtime.bigint();
      fs.appendFileSync(lockLog, `kill ${victim.proc.pid} ${killedAt}\n`);
      victim.proc.kill('SIGKILL');
      const exits = await Promise.all(waiters.map((w) => w.done));
      expect((await victim.done).signal).toBe('SIGKILL');
      for (const e of exits) expect(e.code, e.stderr).toBe(0);
      const log = parseLockLog(fs.readFileSync(lockLog, 'utf8'));
      expect(findOverlaps(log).overlaps).toEqual([]);
      const next = log.find((e) => e.kind === 'enter' && e.ns > killedAt)!;
      handovers.push(Number(next.ns - killedAt) / 1e6);
    }
    const sessions = readSessions(dir);
    for (let r = 0; r < rounds; r++) {
      expect(sessions.has(`victim${r}` as never)).toBe(false);
      for (let w = 0; w < 4; w++) expect(sessions.get(`r${r}w${w}` as never)?.state).toBe(`{"w":${w}}`);
    }
    await expectHealthy(dir);
    const max = Math.max(...handovers);
    figure('lock-handover-after-kill9-ms', { rounds, median: percentile(handovers, 50), max: Math.round(max * 10) / 10 });
    // The kernel frees the lock at the holder's death; waiters poll with a back-off capped at 25 ms (±50%).
    if (STRESS) expect(max).toBeLessThan(500);
  });
});

describeEachStore('first writes racing into a %s store that does not exist yet', (kind) => {
  it(
    'every one succeeds, nothing lost',
    async () => {
      // Rounds of 12 first writers: 1 in npm test, 2 in CI's run, 6 (a data directory) under CRUX_STRESS.
      for (let round = 0; round < (kind === 'dir' ? (STRESS ? 6 : FULL ? 2 : 1) : 2); round++) {
        const store = kind === 'dir' ? join(freshDataDir(), 'not', 'yet') : freshStore(kind);
        const runs = await Promise.all(Array.from({ length: 12 }, (_, i) => spawned(store, ['session', 'put', `first-${i}`, `{"i":${i}}`])));
        expect(runs.map((r) => [r.exitCode, r.stderr])).toEqual(runs.map(() => [0, '']));
        const listed = JSON.parse((await crux(store, ['--json', 'session', 'list'])).stdout).sessions.map((x: { session_id: string }) => x.session_id);
        expect(listed.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `first-${i}`).sort());
      }
    },
    TIMEOUT,
  );
});
