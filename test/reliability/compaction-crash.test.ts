// A crash at every step of a rewrite (compaction, automatic compaction, repair) leaves each journal whole,
// old or new; no acknowledged record is lost; stray temp files end up in quarantine on the next compaction.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectCachedReadsAgree, expectHealthy, figure, journalRecords, readSessions, scaled, startCrux, TIMEOUT } from './harness';

const REWRITE_POINTS = ['rewrite:before-rename', 'rewrite:after-rename'] as const;
const strayTemps = (dir: string) => fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));
const quarantine = (dir: string) => (fs.existsSync(join(dir, 'quarantine')) ? fs.readdirSync(join(dir, 'quarantine')) : []);

/** A data directory with history worth compacting: sessions overwritten many times, and cases, one of them deleted. */
async function seed(): Promise<string> {
  const dir = freshDataDir();
  const lines = Array.from({ length: 12 }, (_, i) => JSON.stringify({ session_id: `s${i}`, state: { i, v: `v${i}` } }));
  const imported = await crux(dir, ['session', 'import'], { input: `${lines.join('\n')}\n` });
  expect(imported.exitCode, imported.stderr).toBe(0);
  for (const i of [0, 1, 2, 3, 4, 5, 0, 1, 2]) {
    const put = await crux(dir, ['session', 'put', `s${i}`, `{"put":${i}}`]);
    expect(put.exitCode, put.stderr).toBe(0);
  }
  for (let i = 0; i < 3; i++) expect((await crux(dir, ['case', 'record', '--task', `task ${i}`, '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
  // A journal with nothing dead is never rewritten: a deleted case makes the cases journal worth compacting too.
  const gone = await crux(dir, ['--quiet', 'case', 'record', '--task', 'gone', '--action', 'a', '--outcome', 'o']);
  expect((await crux(dir, ['case', 'delete', gone.stdout.trim(), '--yes'])).exitCode).toBe(0);
  return dir;
}

const stateOf = (dir: string) => new Map([...readSessions(dir)].map(([k, v]) => [k, `${v.status} ${v.state}`]));
const casesOf = async (dir: string) =>
  (JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases as { case_id: string }[]).map((c) => c.case_id).sort();

describe('crash during compaction', { timeout: TIMEOUT }, () => {
  it('journal check and compact cover the cases journal too (not only sessions)', async () => {
    const dir = await seed();
    const path = join(dir, 'cases.jsonl');
    fs.writeFileSync(path, fs.readFileSync(path, 'utf8').replace('"task 1"', '"task X"'));
    const check = await crux(dir, ['journal', 'check', '--json']);
    expect(check.exitCode, 'a damaged cases.jsonl must fail `journal check`: is CASE_STORE in ALL_STORES (src/domain/stores.ts)?').toBe(9);
    expect(JSON.parse(check.stdout).journals.find((j: any) => j.name === 'cases')?.problems).toEqual([{ line: 2, reason: 'hash mismatch' }]);
  });

  const cases = [...REWRITE_POINTS.map((p) => [p, 'sessions'] as const), ...REWRITE_POINTS.map((p) => [`${p}#2`, 'cases'] as const)];
  it.each(cases)('SIGKILL at %s (%s journal): each journal is whole, old or new; the next compaction quarantines the temp', async (point, victim) => {
    const dir = await seed();
    const reference = stateOf(dir);
    const referenceCases = await casesOf(dir);
    const before = { sessions: fs.readFileSync(join(dir, 'sessions.jsonl')), cases: fs.readFileSync(join(dir, 'cases.jsonl')) };
    const exit = await startCrux(dir, ['journal', 'compact'], { CRUX_TEST_CRASH_AT: point }).done;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');

    const sessionsNow = fs.readFileSync(join(dir, 'sessions.jsonl'));
    const casesNow = fs.readFileSync(join(dir, 'cases.jsonl'));
    const renamed = point.startsWith('rewrite:after-rename');
    // The journal being rewritten: old bytes before the rename, the new snapshot-first file after it.
    const victimNow = victim === 'sessions' ? sessionsNow : casesNow;
    if (renamed) expect(JSON.parse(victimNow.toString().split('\n')[0]!).ev).toBe('journal.snapshot');
    else expect(victimNow.equals(before[victim])).toBe(true);
    // A journal compacted before the crash is new; one after it untouched.
    if (victim === 'cases') expect(JSON.parse(sessionsNow.toString().split('\n')[0]!).ev).toBe('journal.snapshot');
    else expect(casesNow.equals(before.cases)).toBe(true);
    expect(strayTemps(dir)).toHaveLength(renamed ? 0 : 1);

    await expectHealthy(dir);
    expect(stateOf(dir)).toEqual(reference);
    await expectCachedReadsAgree(dir);
    expect(await casesOf(dir)).toEqual(referenceCases);
    // `session get` (served from the replay cache's key index when valid) agrees with a full replay.
    for (const id of ['s0', 's5', 's11']) expect((await crux(dir, ['session', 'get', id])).stdout).toBe(reference.get(id as never)!.slice('active '.length));

    // Writes go on; the next compaction moves the stray temp into quarantine.
    expect((await crux(dir, ['session', 'put', 'after', '{"ok":true}'])).exitCode).toBe(0);
    const compact = await crux(dir, ['journal', 'compact']);
    expect(compact.exitCode, compact.stderr).toBe(0);
    expect(strayTemps(dir)).toEqual([]);
    expect(quarantine(dir).filter((n) => n.includes('stray-rewrite'))).toHaveLength(renamed ? 0 : 1);
    await expectHealthy(dir);
    expect(stateOf(dir)).toEqual(new Map([...reference, ['after', 'active {"ok":true}']]));
    expect(await casesOf(dir)).toEqual(referenceCases);
  });

  it('a half-written temp file (a crash inside the temp write) never becomes the journal and is quarantined', async () => {
    const dir = await seed();
    const reference = stateOf(dir);
    const journal = fs.readFileSync(join(dir, 'sessions.jsonl'));
    const temp = join(dir, '.sessions.jsonl.rewrite-99999.tmp');
    fs.writeFileSync(temp, journal.subarray(0, Math.floor(journal.length / 2)), { mode: 0o600 });
    expect(stateOf(dir)).toEqual(reference);
    await expectHealthy(dir);
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect(fs.existsSync(temp)).toBe(false);
    const [stray] = quarantine(dir).filter((n) => n.includes('stray-rewrite'));
    expect(fs.readFileSync(join(dir, 'quarantine', stray!)).equals(journal.subarray(0, Math.floor(journal.length / 2)))).toBe(true);
    expect(stateOf(dir)).toEqual(reference);
  });

  it.each(REWRITE_POINTS)('SIGKILL at %s during automatic compaction after a write: the write and all before it survive', async (point) => {
    const dir = freshDataDir();
    // 15 × 16 KiB puts of one session: just under the 256 KiB threshold with one live record, so the next put compacts.
    const big = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(16 * 1024) });
    fs.mkdirSync(join(dir, '..'), { recursive: true });
    fs.writeFileSync(`${dir}.big`, big(0));
    for (let i = 1; i <= 15; i++) expect((await crux(dir, ['session', 'put', 'big', '--file', `${dir}.big`])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'put', 'small', '{"n":1}'])).exitCode).toBe(0);
    const size = fs.statSync(join(dir, 'sessions.jsonl')).size;
    expect(size).toBeLessThan(256 * 1024);
    expect(size + big(99).length).toBeGreaterThan(256 * 1024);
    const exit = await startCrux(dir, ['session', 'put', 'big', big(99)], { CRUX_TEST_CRASH_AT: point }).done;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    // The put was fsynced before compaction began (not acknowledged, but durable); nothing before it is lost.
    await expectHealthy(dir);
    const sessions = readSessions(dir);
    expect(sessions.get('big' as never)?.state).toBe(big(99));
    expect(sessions.get('small' as never)?.state).toBe('{"n":1}');
    const renamed = point === 'rewrite:after-rename';
    expect(fs.statSync(join(dir, 'sessions.jsonl')).size < size).toBe(renamed);
    // The next write that compacts sweeps the stray temp into quarantine.
    expect((await crux(dir, ['session', 'put', 'big', big(100)])).exitCode).toBe(0);
    if (!renamed) expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect(strayTemps(dir)).toEqual([]);
    expect(readSessions(dir).get('big' as never)?.state).toBe(big(100));
    await expectHealthy(dir);
  });

  it.each(REWRITE_POINTS)('SIGKILL at %s during `journal check --repair`: the journal is the damaged one or the repaired one, whole', async (point) => {
    const dir = await seed();
    const path = join(dir, 'sessions.jsonl');
    const l = fs.readFileSync(path, 'utf8').split('\n');
    const damagedLine = 5;
    l[damagedLine - 1] = l[damagedLine - 1]!.replace('"i\\":', '"j\\":');
    fs.writeFileSync(path, l.join('\n'));
    const damaged = fs.readFileSync(path);
    const exit = await startCrux(dir, ['journal', 'check', '--repair'], { CRUX_TEST_CRASH_AT: point }).done;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    const now = fs.readFileSync(path);
    if (point === 'rewrite:before-rename') expect(now.equals(damaged)).toBe(true);
    else expect(now.length).toBeLessThan(damaged.length);
    expect((await crux(dir, ['journal', 'check', '--repair'])).exitCode).toBe(0);
    await expectHealthy(dir);
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect(strayTemps(dir)).toEqual([]);
    // Every record but the damaged one is still there.
    const records = journalRecords(path);
    expect(records.length).toBeGreaterThan(0);
    expect(readSessions(dir).size).toBe(12);
  });

  it('repeated compactions crashed at random steps never lose a record, nor a version from history', async () => {
    const dir = await seed();
    // Each round overwrites a session (something to compact), then a compaction is killed: after its history file
    // is in place (whole, or without the restatements history already holds), before or after its rename.
    const points = ['history:after-link', ...REWRITE_POINTS] as const;
    const versions = async () => JSON.parse((await crux(dir, ['--json', 'session', 'history', 's0'])).stdout).history.map((v: any) => v.seq);
    // Each of the three points once in every run; 40 crashes under CRUX_STRESS.
    const rounds = scaled(3, 40);
    let crashes = 0;
    for (let r = 0; r < rounds; r++) {
      expect((await crux(dir, ['session', 'put', 's0', `{"round":${r}}`])).exitCode).toBe(0);
      const reference = stateOf(dir);
      const kept = await versions();
      const exit = await startCrux(dir, ['journal', 'compact'], { CRUX_TEST_CRASH_AT: points[r % points.length]! }).done;
      expect(exit.signal, exit.stderr).toBe('SIGKILL');
      crashes += 1;
      expect(stateOf(dir)).toEqual(reference);
      expect(await versions()).toEqual(kept);
      await expectHealthy(dir);
    }
    const reference = stateOf(dir);
    const kept = await versions();
    expect(kept).toHaveLength(rounds + 3); // the import, two puts of the seed, one put a round
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect(strayTemps(dir)).toEqual([]);
    await expectHealthy(dir);
    expect(stateOf(dir)).toEqual(reference);
    expect(await versions()).toEqual(kept);
    figure('compaction-crashes-repeated', { crashes, points, lost: 0 });
  });
});
