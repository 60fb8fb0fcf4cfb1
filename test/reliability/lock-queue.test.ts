// The waiters' queue of the writers' lock (src/journal/dir/lock/lock-queue.ts): a release wakes one waiter, not all of
// them; waiters enter in the order they came; a waiter killed or timed out in the queue hands its place on, and
// its ticket goes. The holder is this test process (acquireLock), so that it releases exactly when the test says;
// the waiters are bin/crux writers, each started once the one before it sleeps (CRUX_TEST_LOCK_WAITS).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir, tempDir } from '../helpers/cli';
import { acquireLock } from '../../src/journal/dir/lock/lock';
import { expectHealthy, readSessions, startCrux, TIMEOUT, type Child } from './harness';
import { findOverlaps, parseLockLog, readWaits, untilSlept } from './lock-log';

const alive = (c: Child) => () => c.proc.exitCode === null && c.proc.signalCode === null;
const lockFiles = (dir: string) => fs.readdirSync(join(dir, '.lock')).sort();

/** A data directory whose lock this process holds, and `n` writers queued behind it one after another. */
async function queued(n: number, env: (k: number) => Record<string, string | undefined> = () => ({})) {
  const dir = freshDataDir();
  expect((await crux(dir, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
  const logs = tempDir();
  const lockLog = join(logs, 'lock.log');
  const waits = join(logs, 'waits.log');
  const held = await acquireLock(dir);
  const waiters: Child[] = [];
  for (let k = 0; k < n; k++) {
    const w = startCrux(dir, ['session', 'put', `q${k}`, `{"k":${k}}`], {
      CRUX_TEST_LOCK_LOG: lockLog,
      CRUX_TEST_LOCK_WAITS: waits,
      CRUX_LOCK_TIMEOUT: '60s',
      ...env(k),
    });
    await untilSlept(waits, w.proc.pid, () => true, alive(w));
    waiters.push(w);
  }
  return { dir, lockLog, waits, held, waiters };
}

describe("the waiters' queue", { timeout: TIMEOUT }, () => {
  it('a release wakes one waiter: each of 5 queued waiters sleeps once, on the one ahead of it, and they enter in order', async () => {
    const { dir, lockLog, waits, held, waiters } = await queued(5);
    const pids = waiters.map((w) => w.proc.pid!);
    // The first sleeps on the holder (this process), each later one on the waiter ahead of it; each holds a ticket.
    expect(pids.map((p) => readWaits(waits).get(p))).toEqual([[`holder ${process.pid}`], ...pids.slice(0, -1).map((p) => [`ahead ${p}`])]);
    expect(lockFiles(dir).filter((n) => n.startsWith('q.'))).toHaveLength(5);
    await held.release();
    const exits = await Promise.all(waiters.map((w) => w.done));
    expect(exits.map((e) => [e.code, e.stderr])).toEqual(exits.map(() => [0, '']));
    // No waiter woke and went back to sleep: each release woke the one waiter behind the leaver.
    expect(pids.map((p) => readWaits(waits).get(p)?.length)).toEqual([1, 1, 1, 1, 1]);
    const log = parseLockLog(fs.readFileSync(lockLog, 'utf8'));
    expect(findOverlaps(log).overlaps).toEqual([]);
    expect(log.filter((e) => e.kind === 'enter').map((e) => e.pid)).toEqual(pids);
    expect(lockFiles(dir).filter((n) => !/^g\.\d+$/.test(n))).toEqual([]);
    const sessions = readSessions(dir);
    for (let k = 0; k < 5; k++) expect(sessions.get(`q${k}` as never)?.state).toBe(`{"k":${k}}`);
    await expectHealthy(dir);
  });

  it('a waiter sleeps on its node:net connection to the one ahead, with deprecations thrown: stderr stays empty', async () => {
    // No internal or deprecated API on the waiters' path (probe, sleep, wake): --throw-deprecation would end one.
    const { dir, waits, held, waiters } = await queued(3, () => ({ NODE_OPTIONS: '--pending-deprecation --throw-deprecation' }));
    const pids = waiters.map((w) => w.proc.pid!);
    expect(pids.map((p) => readWaits(waits).get(p))).toEqual([[`holder ${process.pid}`], ...pids.slice(0, -1).map((p) => [`ahead ${p}`])]);
    await held.release();
    const exits = await Promise.all(waiters.map((w) => w.done));
    expect(exits.map((e) => [e.code, e.stderr])).toEqual(exits.map(() => [0, '']));
    expect(pids.map((p) => readWaits(waits).get(p)?.length)).toEqual([1, 1, 1]);
    await expectHealthy(dir);
  });

  it('a long-lived process (crux mcp) keeps no connection past its next contention: what one lingered, the next destroys', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'seed', '{}'])).exitCode).toBe(0);
    const waits = join(tempDir(), 'waits.log');
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    await (await acquireLock(dir)).release();
    const before = fds();
    for (let round = 0; round < 4; round++) {
      const held = await acquireLock(dir);
      const w = startCrux(dir, ['session', 'put', `r${round}`, '{}'], { CRUX_TEST_LOCK_WAITS: waits, CRUX_LOCK_TIMEOUT: '60s' });
      await untilSlept(waits, w.proc.pid, () => true, alive(w));
      // Ended, not destroyed: the waiter's connection stays open in this process until its next contention.
      await held.release();
      expect((await w.done).code).toBe(0);
    }
    await (await acquireLock(dir)).release();
    expect(fds()).toBeLessThanOrEqual(before);
  });

  it('a waiter killed with SIGKILL in the queue: the one behind it sleeps on the next one ahead, and removes its ticket', async () => {
    const { dir, lockLog, waits, held, waiters } = await queued(3);
    const [first, victim, last] = waiters as [Child, Child, Child];
    fs.appendFileSync(lockLog, `kill ${victim.proc.pid} ${process.hrtime.bigint()}\n`);
    victim.proc.kill('SIGKILL');
    // Woken by the death, it passes over the victim's ticket (refused: removed) and sleeps on the first waiter.
    // (It may sleep on the victim once more between: its connection can close before the victim's socket does.)
    await untilSlept(waits, last.proc.pid, (on) => on === `ahead ${first.proc.pid}`, alive(last));
    expect(readWaits(waits).get(last.proc.pid!)?.at(0)).toBe(`ahead ${victim.proc.pid}`);
    expect(lockFiles(dir).some((n) => n.startsWith('q.') && n.includes(`.${victim.proc.pid}.`))).toBe(false);
    await held.release();
    expect((await victim.done).signal).toBe('SIGKILL');
    for (const e of await Promise.all([first.done, last.done])) expect([e.code, e.stderr]).toEqual([0, '']);
    expect(readWaits(waits).get(first.proc.pid!)).toEqual([`holder ${process.pid}`]);
    const log = parseLockLog(fs.readFileSync(lockLog, 'utf8'));
    expect(findOverlaps(log).overlaps).toEqual([]);
    expect(log.filter((e) => e.kind === 'enter').map((e) => e.pid)).toEqual([first.proc.pid, last.proc.pid]);
    // The killed waiter's socket and holder file are swept by later writes, as any dead contender's.
    for (let i = 0; i < 3 && lockFiles(dir).some((n) => !/^g\.\d+$/.test(n)); i++)
      expect((await crux(dir, ['session', 'put', `after${i}`, '{}'])).exitCode).toBe(0);
    expect(lockFiles(dir).filter((n) => !/^g\.\d+$/.test(n))).toEqual([]);
    await expectHealthy(dir);
  });

  it('a waiter that times out in the queue (exit 75) hands its place on: the one behind it sleeps on the next one ahead', async () => {
    // Long enough for the last waiter to start and sleep on the quitter first, on a busy host too (at 300 ms, a
    // process start slower than that found the quitter gone, and the hand-on was never exercised).
    const { dir, lockLog, waits, held, waiters } = await queued(3, (k) => (k === 1 ? { CRUX_LOCK_TIMEOUT: '3s' } : {}));
    const [first, quitter, last] = waiters as [Child, Child, Child];
    const gaveUp = await quitter.done;
    expect(gaveUp.code).toBe(75);
    expect(gaveUp.stderr).toMatch(new RegExp(`locked by pid ${process.pid}\\b`));
    await untilSlept(waits, last.proc.pid, (on) => on === `ahead ${first.proc.pid}`, alive(last));
    // A waiter that gives up closes its socket before it exits: the one behind wakes once, and sleeps on the next.
    expect(readWaits(waits).get(last.proc.pid!)).toEqual([`ahead ${quitter.proc.pid}`, `ahead ${first.proc.pid}`]);
    // The quitter left nothing behind: no socket, holder file or ticket of its own.
    expect(lockFiles(dir).some((n) => n.includes(`.${quitter.proc.pid}.`))).toBe(false);
    await held.release();
    for (const e of await Promise.all([first.done, last.done])) expect([e.code, e.stderr]).toEqual([0, '']);
    const log = parseLockLog(fs.readFileSync(lockLog, 'utf8'));
    expect(log.filter((e) => e.kind === 'enter').map((e) => e.pid)).toEqual([first.proc.pid, last.proc.pid]);
    expect(lockFiles(dir).filter((n) => !/^g\.\d+$/.test(n))).toEqual([]);
  });
});
