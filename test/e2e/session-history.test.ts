// crux session history / get --at across compactions; history/ kept, verified by journal check, dropped on request.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, snapshotDir, type Run } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const at = (time: string) => ['--now', time];

async function ok(run: Promise<Run>): Promise<Run> {
  const r = await run;
  expect(r.exitCode, `stderr: ${r.stderr}`).toBe(0);
  return r;
}

/** s: {"v":1} at 10:00 (seq 1), {"v":2} at 11:00 (seq 2), archived at 12:00 (seq 3); compacted; {"v":3} the next day. */
async function setup(env: Record<string, string> = {}) {
  const dir = freshDataDir();
  const run = (args: string[]) => ok(crux(dir, args, { env }));
  await run([...at('2026-11-01T10:00:00Z'), 'session', 'put', 's', '{"v":1}']);
  await run([...at('2026-11-01T11:00:00Z'), 'session', 'put', 's', '{"v":2}']);
  await run([...at('2026-11-01T12:00:00Z'), '--actor', 'ops', 'session', 'archive', 's']);
  await run([...at('2026-11-02T00:00:00Z'), 'journal', 'compact']);
  await run([...at('2026-11-02T01:00:00Z'), 'session', 'unarchive', 's']);
  await run([...at('2026-11-02T02:00:00Z'), 'session', 'put', 's', '{"v":3}']);
  return { dir, run };
}

describe('crux session history', () => {
  it('lists every version, newest first, across a compaction (--json and a table)', async () => {
    const { dir, run } = await setup();
    const { history } = JSON.parse((await run(['--json', 'session', 'history', 's'])).stdout);
    expect(history.map((h: any) => [h.seq, h.ev, h.status, h.state_bytes, h.actor])).toEqual([
      [7, 'session.put', 'active', 7, null],
      [6, 'session.unarchived', 'active', 7, null],
      [3, 'session.archived', 'archived', 7, 'ops'],
      [2, 'session.put', 'active', 7, null],
      [1, 'session.put', 'active', 7, null],
    ]);
    expect(Object.keys(history[0])).toEqual(['seq', 'ts', 'ev', 'actor', 'status', 'state_bytes']);
    expect(history[4].ts).toBe('2026-11-01T10:00:00.000Z');
    expect(JSON.parse((await run(['--json', 'session', 'history', 's', '--limit', '2'])).stdout).history.map((h: any) => h.seq)).toEqual([7, 6]);
    const table = (await run(['session', 'history', 's'])).stdout;
    expect(table.split('\n')[0]).toBe('seq\ttime\tevent\tactor\tstatus\tstate_bytes');
    expect(table).toMatch(/\n3\t2026-11-01T12:00:00\.000Z\tsession\.archived\tops\tarchived\t7\n/);
    // No actor is - in every table (session list too).
    expect(table).toMatch(/\n1\t2026-11-01T10:00:00\.000Z\tsession\.put\t-\tactive\t7\n/);
    expect(fs.readdirSync(join(dir, 'history'))).toEqual(['sessions.000000000003.jsonl']);
    const missing = await crux(dir, ['session', 'history', 'nope']);
    expect(missing.exitCode).toBe(3);
    expect((await crux(dir, ['session', 'history', 's', '--limit', 'x'])).exitCode).toBe(5);
  });
});

describe('crux session get --at', () => {
  it('answers by seq and by time, from history/ and the journal, byte for byte', async () => {
    const { dir, run } = await setup();
    const get = async (point: string) => (await run(['session', 'get', 's', '--at', point])).stdout;
    expect(await get('1')).toBe('{"v":1}');
    expect(await get('2')).toBe('{"v":2}');
    expect(await get('2026-11-01T10:30:00Z')).toBe('{"v":1}');
    expect(await get('2026-11-01T11:00:00.000Z')).toBe('{"v":2}');
    expect(await get('2026-11-02T01:30:00Z')).toBe('{"v":2}');
    expect(await get('7')).toBe('{"v":3}');
    const then = JSON.parse((await run(['--json', 'session', 'get', 's', '--at', '3'])).stdout);
    expect(then.session).toMatchObject({ session_id: 's', status: 'archived', archive_reason: null, state: { v: 2 } });
    const before = snapshotDir(dir);
    for (const [point, code] of [
      ['2026-11-01T09:00:00Z', 3],
      ['soon', 5],
      ['0', 5],
    ] as const) {
      const r = await crux(dir, ['session', 'get', 's', '--at', point]);
      expect(r.exitCode, point).toBe(code);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^crux: .+\n$/);
    }
    expect((await crux(dir, ['--agent', 'bob', 'session', 'get', 's', '--at', '2'])).exitCode).toBe(3);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('is gone after --drop-history: the oldest version left is the compacted one', async () => {
    const { dir, run } = await setup();
    await run([...at('2026-11-03T00:00:00Z'), '--json', 'journal', 'compact', '--drop-history']);
    expect(fs.readdirSync(join(dir, 'history'))).toEqual([]);
    expect((await crux(dir, ['session', 'get', 's', '--at', '2'])).exitCode).toBe(3);
    expect((await crux(dir, ['session', 'get', 's', '--at', '2026-11-01T11:30:00Z'])).exitCode).toBe(3);
    const { history } = JSON.parse((await run(['--json', 'session', 'history', 's'])).stdout);
    expect(history.map((h: any) => h.ev)).toEqual(['session.imported']);
    expect((await run(['session', 'get', 's', '--at', '2026-11-03T00:00:00Z'])).stdout).toBe('{"v":3}');
  });
});

describe('history/ retention and journal check', () => {
  it('CRUX_HISTORY_KEEP: a later compaction deletes history older than that', async () => {
    const { dir, run } = await setup({ CRUX_HISTORY_KEEP: '2d' });
    await run([...at('2026-11-02T12:00:00Z'), 'journal', 'compact']);
    expect(fs.readdirSync(join(dir, 'history'))).toHaveLength(2);
    // Two days after 11-01 23:00: the first file (newest record 11-01 12:00) goes, the second (11-02 02:00) stays.
    // Nothing in the journal is dead by then (its snapshot and one restatement): it is not rewritten, not archived again.
    const journal = fs.readFileSync(join(dir, 'sessions.jsonl'));
    await run([...at('2026-11-03T23:00:00Z'), 'journal', 'compact']);
    expect(fs.readdirSync(join(dir, 'history'))).toEqual(['sessions.000000000007.jsonl']);
    expect(fs.readFileSync(join(dir, 'sessions.jsonl')).equals(journal)).toBe(true);
    expect((await crux(dir, ['session', 'get', 's', '--at', '2'])).exitCode).toBe(3);
    expect((await crux(dir, ['journal', 'compact'], { env: { CRUX_HISTORY_KEEP: 'soon' } })).exitCode).toBe(5);
  });

  it('CRUX_HISTORY_MAX_BYTES: nothing is kept beyond it', async () => {
    const { dir, run } = await setup({ CRUX_HISTORY_MAX_BYTES: '100' });
    expect(fs.readdirSync(join(dir, 'history'))).toEqual([]);
    await run(['journal', 'check']);
  });

  it('journal check verifies history/: a flipped byte there is exit 9 naming the file; --repair quarantines it', async () => {
    const { dir, run } = await setup();
    const check = JSON.parse((await run(['--json', 'journal', 'check'])).stdout);
    expect(check.journals[0].history).toEqual({ files: 1, records: 3, bytes: expect.any(Number), problems: [] });
    const file = join(dir, 'history', 'sessions.000000000003.jsonl');
    const bytes = fs.readFileSync(file);
    bytes[60]! ^= 1;
    fs.writeFileSync(file, bytes);
    const damaged = await crux(dir, ['--json', 'journal', 'check']);
    expect(damaged.exitCode).toBe(9);
    expect(JSON.parse(damaged.stdout).journals[0].history.problems).toEqual([
      { file: 'history/sessions.000000000003.jsonl', line: 1, reason: expect.any(String) },
    ]);
    expect((await crux(dir, ['journal', 'check'])).stdout).toMatch(/history\/sessions\.000000000003\.jsonl:1: /);
    await run(['journal', 'check', '--repair']);
    await run(['journal', 'check']);
    expect(fs.readdirSync(join(dir, 'quarantine')).some((n) => n.includes('history-sessions.000000000003.jsonl'))).toBe(true);
  });

  it('history and get --at over a damaged history line carry it in --json warnings (SPEC §8)', async () => {
    const { dir, run } = await setup();
    const file = join(dir, 'history', 'sessions.000000000003.jsonl');
    const bytes = fs.readFileSync(file);
    bytes[60]! ^= 1;
    fs.writeFileSync(file, bytes);
    const warning = { file: 'history/sessions.000000000003.jsonl', line: 1, reason: expect.any(String) };
    expect(JSON.parse((await run(['--json', 'session', 'history', 's'])).stdout).warnings).toEqual([warning]);
    expect(JSON.parse((await run(['--json', 'session', 'get', 's', '--at', '3'])).stdout).warnings).toEqual([warning]);
  });

  it('doctor does not count history/ as a stray file; other commands never read it', async () => {
    const { dir, run } = await setup();
    const report = JSON.parse((await run(['--json', 'doctor'])).stdout);
    expect(report.other_files).toEqual([]);
    // Unreadable history changes nothing for list, get and put.
    fs.chmodSync(join(dir, 'history'), 0o000);
    try {
      await run(['session', 'list']);
      expect((await run(['session', 'get', 's'])).stdout).toBe('{"v":3}');
      await run(['session', 'put', 's', '{"v":4}']);
    } finally {
      fs.chmodSync(join(dir, 'history'), 0o700);
    }
  });
});
