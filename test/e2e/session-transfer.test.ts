// Byte-for-byte state, export → import round trips, imports as one append, and bounded growth.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, snapshotDir, STRESS, tempDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const NOW = ['--now', '2026-03-01T12:00:00Z'];
const lineCount = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

const AWKWARD: Record<string, string> = {
  big: '12345678901234567890',
  huge_exp: '{"e":1e400,"neg":-1E-400}',
  neg_zero: '[-0, -0.0, 0e0]',
  float_one: '{"f":1.0,"g":1.50}',
  key_order: '{"2":"b","1":"a","b":1,"a":2}',
  dup_keys: '{"a":1,"a":2}',
  unicode: '{"é":"\\u00e9","emoji":"🎉","escaped":"\\ud83c\\udf89","rtl":"שלום"}',
  trailing_newline: '{"x":1}\n',
  pretty: '{\n  "nested": {\n    "deep": [1, 2, {"k": null}]\n  }\n}\n',
  crlf: '{"a":\r\n1}\r\n',
  leading_space: '  "str"  ',
  scalar_null: 'null',
  string_with_newline_escape: '"line\\nbreak"',
};

describe('state byte-for-byte', () => {
  it('returns every awkward document exactly, via get, get --json and export → import → get', async () => {
    const dir = freshDataDir();
    for (const [id, state] of Object.entries(AWKWARD)) {
      const put = await crux(dir, ['session', 'put', id], { input: state });
      expect(put.exitCode, `${id}: ${put.stderr}`).toBe(0);
      expect((await crux(dir, ['session', 'get', id])).stdout, id).toBe(state);
    }
    // get --json splices the stored bytes in as "state" (one JSON document on one line).
    const big = await crux(dir, ['--json', 'session', 'get', 'big']);
    expect(big.stdout).toContain('"state":12345678901234567890}}');
    const order = await crux(dir, ['--json', 'session', 'get', 'key_order']);
    expect(order.stdout).toContain('"state":{"2":"b","1":"a","b":1,"a":2}}}');
    const pretty = await crux(dir, ['--json', 'session', 'get', 'pretty']);
    expect(pretty.stdout.trimEnd()).not.toContain('\n');
    expect(JSON.parse(pretty.stdout).session.state_text).toBe(AWKWARD.pretty);

    const exported = await crux(dir, ['session', 'export', ...NOW]);
    expect(exported.exitCode).toBe(0);
    expect(exported.stdout.split('\n').filter(Boolean)).toHaveLength(Object.keys(AWKWARD).length);
    for (const line of exported.stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    const file = join(tempDir(), 'sessions.jsonl');
    fs.writeFileSync(file, exported.stdout);

    const copy = freshDataDir();
    const imported = await crux(copy, ['--json', 'session', 'import', file]);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ imported: Object.keys(AWKWARD).length, created: Object.keys(AWKWARD).length });
    for (const [id, state] of Object.entries(AWKWARD)) expect((await crux(copy, ['session', 'get', id])).stdout, id).toBe(state);
    expect((await crux(copy, ['session', 'export', ...NOW])).stdout).toBe(exported.stdout);
    // Importing the same export again changes nothing at all.
    const before = snapshotDir(copy);
    expect(JSON.parse((await crux(copy, ['--json', 'session', 'import', file])).stdout)).toMatchObject({ imported: 0, unchanged: Object.keys(AWKWARD).length });
    expect(snapshotDir(copy)).toEqual(before);
  });
});

describe('export / import', () => {
  it('round-trips every field: agents, status, archive, close, tokens, expiry', async () => {
    const dir = freshDataDir();
    await crux(dir, [...NOW, '--actor', 'ops', 'session', 'put', 'a', '{"a":1}', '--tokens', '42', '--ttl', '1d']);
    await crux(dir, [...NOW, '--agent', 'bob', 'session', 'put', 'a', '{"bob":1}']);
    await crux(dir, [...NOW, 'session', 'put', 'arch', '[]']);
    await crux(dir, [...NOW, 'session', 'archive', 'arch', '--reason', 'later']);
    await crux(dir, [...NOW, 'session', 'put', 'done', '{}']);
    await crux(dir, [...NOW, 'session', 'close', 'done', '--outcome', 'abandoned', '--summary', 'dropped']);
    const exported = (await crux(dir, [...NOW, 'session', 'export'])).stdout;
    const rows = exported
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.agent, r.session_id, r.status])).toEqual([
      ['bob', 'a', 'active'],
      [null, 'a', 'active'],
      [null, 'arch', 'archived'],
      [null, 'done', 'closed'],
    ]);
    expect(rows[1]).toMatchObject({ total_tokens: 42, actor: 'ops', expires_at: '2026-03-02T12:00:00.000Z', state: { a: 1 } });
    expect(rows[2]).toMatchObject({ archived: true, archive_reason: 'later' });
    expect(rows[3]).toMatchObject({ outcome: 'abandoned', summary: 'dropped', closed_at: '2026-03-01T12:00:00.000Z' });
    // An agent exports only its own; --json wraps the lines in {"sessions": [...]}.
    expect((await crux(dir, [...NOW, '--agent', 'bob', 'session', 'export'])).stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(JSON.parse((await crux(dir, [...NOW, '--json', 'session', 'export'])).stdout).sessions).toHaveLength(4);

    const copy = freshDataDir();
    expect((await crux(copy, ['session', 'import'], { input: exported })).exitCode).toBe(0);
    expect((await crux(copy, [...NOW, 'session', 'export'])).stdout).toBe(exported);
    expect((await crux(copy, ['--agent', 'bob', 'session', 'get', 'a'])).stdout).toBe('{"bob":1}');
    // Closed stays closed: a put is refused, a close reports the imported record.
    expect((await crux(copy, ['session', 'put', 'done', '{}'])).exitCode).toBe(4);
    expect(JSON.parse((await crux(copy, ['--json', 'session', 'close', 'done'])).stdout)).toMatchObject({
      outcome: 'already_closed',
      session: { outcome: 'abandoned' },
    });
  });

  it("needs only session_id and state; lines without agent take the caller's", async () => {
    const dir = freshDataDir();
    const input = '{"session_id":"m","state":{"min":true}}\n\n{"session_id":"n","state":[1.0],"agent":null}\n';
    const run = await crux(dir, ['--json', '--agent', 'eve', ...NOW, 'session', 'import', '-'], { input });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ imported: 2, lines: 2 });
    expect((await crux(dir, ['--agent', 'eve', 'session', 'get', 'm'])).stdout).toBe('{"min":true}');
    expect((await crux(dir, ['session', 'get', 'n'])).stdout).toBe('[1.0]');
    expect(JSON.parse((await crux(dir, ['--json', '--agent', 'eve', ...NOW, 'session', 'get', 'm'])).stdout).session).toMatchObject({
      status: 'active',
      total_tokens: 0,
      updated_at: '2026-03-01T12:00:00.000Z',
    });
  });

  it('refuses the whole import on a bad line (5, its line number) and writes nothing', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'existing', '{}']);
    await crux(dir, ['session', 'put', 'final', '{}']);
    await crux(dir, ['session', 'close', 'final']);
    const before = snapshotDir(dir);
    const good = (i: number) => JSON.stringify({ session_id: `ok${i}`, state: { i } });
    const bad: [string, number, RegExp][] = [
      [`${good(1)}\n${good(2)}\n{"session_id":"x","state":{}\n`, 5, /line 3: not valid JSON/],
      [`${good(1)}\n{"session_id":"bad::id","state":1}\n`, 5, /line 2: session id must not contain/],
      [`${good(1)}\n${good(2)}\n${good(3)}\n{"session_id":"y"}\n`, 5, /line 4: state is required/],
      [`${good(1)}\n{"session_id":"z","state":1,"agent":"a::b"}\n`, 5, /line 2: agent name/],
      [`${good(1)}\n[1,2]\n`, 5, /line 2: not a JSON object/],
      [`${good(1)}\n{"session_id":"final","state":{"other":1},"status":"closed"}\n`, 4, /line 2: session "final" is closed/],
    ];
    for (const [input, code, message] of bad) {
      const run = await crux(dir, ['session', 'import'], { input });
      expect(run.exitCode, run.stderr).toBe(code);
      expect(run.stderr).toMatch(message);
    }
    const big = `${good(1)}\n${JSON.stringify({ session_id: 'big', state: 'x'.repeat(100) })}\n`;
    const tooBig = await crux(dir, ['session', 'import'], { input: big, env: { CRUX_MAX_STATE_BYTES: '50' } });
    expect(tooBig.exitCode).toBe(5);
    expect(tooBig.stderr).toContain('line 2: the state is 102 bytes');
    expect((await crux(dir, ['session', 'import', join(dir, 'missing.jsonl')])).exitCode).toBe(5);
    expect(snapshotDir(dir)).toEqual(before);
    const none = freshDataDir();
    expect((await crux(none, ['session', 'import'], { input: '{"nope":1}\n' })).exitCode).toBe(5);
    expect(fs.existsSync(none)).toBe(false);
  });

  it('imports 10,000 sessions in one locked, fsynced append', async () => {
    const dir = freshDataDir();
    const input = `${Array.from({ length: 10_000 }, (_, i) => `{"session_id":"s${i}","state":{"i":${i},"big":12345678901234567890},"agent":${i % 2 ? '"odd"' : 'null'}}`).join('\n')}\n`;
    // Killed after the write and before its fsync: if the import were several appends, only the first would be there.
    const killed = await crux(dir, ['session', 'import'], { input, env: { CRUX_TEST_CRASH_AT: 'append:before-fsync' } });
    expect(killed.exitCode).not.toBe(0);
    expect(lineCount(join(dir, 'sessions.jsonl'))).toBe(10_000);

    const clean = freshDataDir();
    const lockLog = join(tempDir(), 'lock.log');
    const run = await crux(clean, ['--json', 'session', 'import'], { input, env: { CRUX_TEST_LOCK_LOG: lockLog } });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ imported: 10_000, created: 10_000 });
    expect(
      fs
        .readFileSync(lockLog, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual(['enter', 'exit']);
    expect(lineCount(join(clean, 'sessions.jsonl'))).toBe(10_000);
    expect((await crux(clean, ['--agent', 'odd', 'session', 'get', 's9999'])).stdout).toBe('{"i":9999,"big":12345678901234567890}');
    expect(JSON.parse((await crux(clean, ['--json', 'session', 'list'])).stdout).hidden_scoped).toBe(5_000);
  });
});

describe('runaway growth', () => {
  // 40 puts (2 MB without compaction, past the bound 5 times over) in every run; 150 under CRUX_STRESS.
  const PUTS = STRESS ? 150 : 40;
  it(`${PUTS} puts of 50 KB to one id keep sessions.jsonl bounded (auto-compaction), and get stays right`, async () => {
    const dir = freshDataDir();
    const size = 50_000;
    const stateOf = (i: number) => `{"turn":${i},"blob":"${String(i % 10).repeat(size - 30)}"}`;
    const file = join(dir, 'sessions.jsonl');
    let peak = 0;
    for (let i = 0; i < PUTS; i += 1) {
      const run = await crux(dir, ['session', 'put', 'grow', '--add-tokens', '100'], { input: stateOf(i) });
      expect(run.exitCode, run.stderr).toBe(0);
      peak = Math.max(peak, fs.statSync(file).size);
    }
    // Without compaction this journal would be PUTS × ~50 KB (7.5 MB for 150).
    expect(peak).toBeLessThan(20 * size);
    expect(fs.statSync(file).size).toBeLessThan(10 * size);
    expect((await crux(dir, ['session', 'get', 'grow'])).stdout).toBe(stateOf(PUTS - 1));
    expect(JSON.parse((await crux(dir, ['--json', 'session', 'get', 'grow'])).stdout).session.total_tokens).toBe(PUTS * 100);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
  });
});
