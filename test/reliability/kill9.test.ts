// kill -9 at random moments and at every crash point of the append: every acknowledged write survives,
// the next write quarantines a torn tail, and `journal check` is healthy afterwards.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeRecords } from '../../src/journal/codec/record';
import { crux, freshDataDir, tempDir } from '../helpers/cli';
import { parseLockLog } from './lock-log';
import { expectCachedReadsAgree, expectHealthy, figure, killGroup, readSessions, scaled, sleep, startCrux, startShell, TIMEOUT } from './harness';

const WRITERS_PER_ROUND = 3;

/** A writer: puts in a loop; prints each id only after its put exited 0 (= acknowledged). */
function writerScript(dataDir: string, prefix: string): string {
  return `
for i in $(seq 1 1000); do
  pad=$(head -c $((RANDOM % 3000)) /dev/zero | tr '\\0' x)
  "$CRUX" --data-dir '${dataDir}' session put "${prefix}-$i" "{\\"id\\":\\"${prefix}-$i\\",\\"pad\\":\\"$pad\\"}" >/dev/null 2>/dev/null && echo "${prefix}-$i"
done`;
}

/** A plausible torn write: the first bytes of a record that would have come next. */
function tornFragment(path: string): string {
  const text = fs.readFileSync(path, 'utf8');
  const last = JSON.parse(text.trimEnd().split('\n').pop()!);
  const { text: next } = encodeRecords(
    { seq: last.seq, h: last.h },
    [{ ev: 'session.put', data: { id: 'torn', state: '{"never":"acknowledged"}' } }],
    new Date().toISOString(),
  );
  return next.slice(0, 1 + Math.floor(Math.random() * (next.length - 2)));
}

describe('kill -9', { timeout: TIMEOUT }, () => {
  it('SIGKILL at random moments: every acknowledged write survives and the journal heals', async () => {
    const dir = freshDataDir();
    const journal = join(dir, 'sessions.jsonl');
    const rounds = scaled(10, 110);
    const acked = new Set<string>();
    const injected: string[] = [];
    let kills = 0;
    const lockLog = join(tempDir(), 'lock.log');
    const started = performance.now();
    for (let r = 0; r < rounds; r++) {
      const writers = Array.from({ length: WRITERS_PER_ROUND }, (_, w) => startShell(writerScript(dir, `r${r}w${w}`), { CRUX_TEST_LOCK_LOG: lockLog }));
      await Promise.all(
        writers.map(async (writer) => {
          await sleep(50 + Math.random() * 650);
          killGroup(writer);
          const exit = await writer.done;
          expect(exit.signal).toBe('SIGKILL');
          kills += 1;
          for (const id of exit.stdout.split('\n').filter(Boolean)) acked.add(id);
        }),
      );
      // Every fifth round, leave a torn tail behind as a writer dying inside write(2) would (power loss, EFBIG).
      if (r % 5 === 4 && fs.existsSync(journal)) {
        const fragment = tornFragment(journal);
        fs.appendFileSync(journal, fragment);
        injected.push(fragment);
      }
    }
    const seconds = (performance.now() - started) / 1000;
    // The next write repairs the tail; then the journal is healthy.
    const last = await crux(dir, ['session', 'put', 'final', '{}']);
    expect(last.exitCode, last.stderr).toBe(0);
    await expectHealthy(dir);
    await expectCachedReadsAgree(dir);
    const sessions = readSessions(dir);
    const lost = [...acked].filter((id) => !sessions.get(id as never)?.state.startsWith(`{"id":"${id}","pad":"`));
    expect(lost).toEqual([]);
    // Acknowledged writes to hold to (about 2 a round on a quiet machine; a loaded one may start fewer before the kills).
    expect(acked.size).toBeGreaterThan(0);
    expect(sessions.has('torn' as never)).toBe(false);
    // `session get` answers from the replay cache's key index when it is valid: it must agree after the kills.
    const sample = [...acked].sort(() => Math.random() - 0.5).slice(0, 12);
    for (const id of sample) expect((await crux(dir, ['session', 'get', id])).stdout, id).toBe(sessions.get(id as never)!.state);
    // Each injected torn tail is in quarantine, byte for byte.
    const quarantined = fs
      .readdirSync(join(dir, 'quarantine'))
      .filter((n) => n.includes('.tail-at-'))
      .map((n) => fs.readFileSync(join(dir, 'quarantine', n), 'utf8'));
    for (const fragment of injected) expect(quarantined).toContain(fragment);
    // How many kills landed inside the lock (between its enter and exit): the writes most at risk.
    const open = new Set<number>();
    for (const e of parseLockLog(fs.readFileSync(lockLog, 'utf8'))) e.kind === 'enter' ? open.add(e.pid) : open.delete(e.pid);
    figure('kill9-random', {
      kills,
      killed_inside_lock: open.size,
      acknowledged: acked.size,
      lost: lost.length,
      torn_tails_injected: injected.length,
      torn_tails_quarantined: quarantined.length,
      seconds: Math.round(seconds),
    });
  });

  it('SIGKILL at each crash point of the append: nothing acknowledged is lost, the next write repairs', async () => {
    const dir = freshDataDir();
    const journal = join(dir, 'sessions.jsonl');
    expect((await crux(dir, ['session', 'put', 'base', '{"n":0}'])).exitCode).toBe(0);
    const points = ['append:before-write', 'append:before-fsync', 'append:after-quarantine'];
    const repeats = scaled(1, 15);
    let crashes = 0;
    for (let n = 0; n < repeats; n++) {
      for (const point of points) {
        const id = `${point.replace(/\W/g, '-')}-${n}`;
        // append:after-quarantine is only reached when there is a torn tail to quarantine.
        const fragment = point === 'append:after-quarantine' ? tornFragment(journal) : undefined;
        if (fragment) fs.appendFileSync(journal, fragment);
        const before = fs.readFileSync(journal);
        const exit = await startCrux(dir, ['session', 'put', id, `{"n":${n}}`], { CRUX_TEST_CRASH_AT: point }).done;
        expect(exit.signal, `${point}: ${exit.stderr}`).toBe('SIGKILL');
        crashes += 1;
        const after = fs.readFileSync(journal);
        if (point === 'append:before-fsync') {
          // Written but never acknowledged: present or absent are both correct; here the page cache kept it.
          expect(after.subarray(0, before.length).equals(before)).toBe(true);
        } else {
          // Killed before its write: the journal is as it was (the torn tail too, already copied to quarantine).
          expect(after.equals(before)).toBe(true);
        }
        const next = await crux(dir, ['session', 'put', `after-${id}`, `{"n":${n}}`]);
        expect(next.exitCode, next.stderr).toBe(0);
        if (fragment) expect(next.stderr).toContain('unterminated tail');
        await expectHealthy(dir);
      }
    }
    const sessions = readSessions(dir);
    expect(sessions.get('base' as never)?.state).toBe('{"n":0}');
    for (let n = 0; n < repeats; n++)
      for (const point of points) expect(sessions.get(`after-${point.replace(/\W/g, '-')}-${n}` as never)?.state).toBe(`{"n":${n}}`);
    figure('kill9-crash-points', { points, crashes, lost: 0 });
  });
});
