import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { CRUX, freshDataDir, snapshotDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

describe('crux foundation', () => {
  it('prints help and exits 0', async () => {
    const run = await crux(freshDataDir(), ['--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Usage: crux');
    expect(run.stdout).toContain('session');
    expect(run.stdout).toContain('journal');
  });

  it('answers an unknown command or option with exit 2 and one line on stderr', async () => {
    for (const args of [['frobnicate'], ['session', 'get', 'x', '--bogus'], ['session', 'get']]) {
      const run = await crux(freshDataDir(), args);
      expect(run.exitCode, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^crux: /);
      expect(run.stderr).not.toMatch(/\n {4}at /);
    }
  });

  it('points a usage error at the help of the innermost command it reached', async () => {
    for (const [args, help] of [
      [['frobnicate'], 'crux --help'],
      [['session', 'frob'], 'crux session --help'],
      [['--json', 'session', 'get', 'x', '--bogus'], 'crux session get --help'],
      [['--agent', 'a', 'case', 'retrieve', '--top-k'], 'crux case retrieve --help'],
      [['journal', 'check', 'x', 'y', 'z'], 'crux journal check --help'],
    ] as const) {
      const run = await crux(freshDataDir(), [...args]);
      expect(run.exitCode, args.join(' ')).toBe(2);
      const hint = args[0] === '--json' ? JSON.parse(run.stderr).error.hint : /\((see [^)]*)\)\n$/.exec(run.stderr)?.[1];
      expect(hint, args.join(' ')).toBe(`see \`${help}\``);
    }
  });

  it('ends help quietly when the reader has gone (`crux --help | head -1`)', async () => {
    // `true` exits at once, so crux writes its help into a pipe nobody reads (EPIPE): no stack trace.
    for (const args of ['--help', 'session --help', 'session help put']) {
      const run = await execa('sh', ['-c', `(sleep 0.3; exec "$0" ${args}) | true`, CRUX], { reject: false });
      expect(run.stderr, args).toBe('');
    }
  });

  it('keeps an error that quotes its input to one printable line (no raw newline or terminal escape)', async () => {
    const input = Buffer.from([0xff, 0x41, 0x42, 0x0a, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0xc2, 0x9b]);
    const run = await crux(freshDataDir(), ['case', 'record', '--stdin'], { input });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/^crux: standard input is not valid JSON [^\n]*\\n\\x1b\[31m[^\n]*\n$/);
    expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const json = await crux(freshDataDir(), ['--json', 'case', 'record', '--stdin'], { input });
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 5, kind: 'invalid_input' });
  });

  it('treats a missing data directory as absence: reads report nothing and create nothing', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'get', 'x'])).exitCode).toBe(3);
    const check = await crux(dir, ['journal', 'check', '--json']);
    expect(check.exitCode).toBe(0);
    expect(JSON.parse(check.stdout).healthy).toBe(true);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('creates the data directory 0700 and journals 0600 on the first write', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(join(dir, 'sessions.jsonl')).mode & 0o777).toBe(0o600);
  });

  it('returns the state byte-for-byte', async () => {
    const dir = freshDataDir();
    const state = '{"big": 12345678901234567890, "f": 1.0, "e": 1e400, "z": -0, "2": "b", "1": "a"}\n';
    expect((await crux(dir, ['session', 'put', 'a'], { input: state })).exitCode).toBe(0);
    const get = await crux(dir, ['session', 'get', 'a']);
    expect(get).toMatchObject({ exitCode: 0, stdout: state });
    const json = await crux(dir, ['session', 'get', 'a', '--json']);
    expect(json.stdout).toContain('"state":{"big": 12345678901234567890, "f": 1.0, "e": 1e400, "z": -0, "2": "b", "1": "a"}');
  });

  it('refuses malformed state with exit 5 and leaves the data directory unchanged', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}']);
    const before = snapshotDir(dir);
    for (const bad of ['{', '', 'nope', '{"a":1}}']) {
      const run = await crux(dir, ['session', 'put', 'a'], { input: bad });
      expect(run.exitCode, JSON.stringify(bad)).toBe(5);
    }
    expect((await crux(dir, ['session', 'put', 'a'], { input: Buffer.from([0xff, 0xfe, 0x00]) })).exitCode).toBe(5);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('journal check finds a flipped character and a deleted line at their lines (exit 9), and --repair heals', async () => {
    const dir = freshDataDir();
    for (const id of ['a', 'b', 'c', 'd']) await crux(dir, ['session', 'put', id, `{"id":"${id}"}`]);
    const path = join(dir, 'sessions.jsonl');
    const l = fs.readFileSync(path, 'utf8').split('\n');
    l[1] = l[1]!.replace('\\"id\\":\\"b\\"', '\\"id\\":\\"B\\"');
    l.splice(2, 1);
    fs.writeFileSync(path, l.join('\n'));
    const check = await crux(dir, ['journal', 'check', '--json']);
    expect(check.exitCode).toBe(9);
    const report = JSON.parse(check.stdout);
    expect(report.healthy).toBe(false);
    expect(report.journals[0].problems).toEqual([
      { line: 2, reason: 'hash mismatch' },
      { line: 3, reason: 'chain break; sequence gap (expected 3, found 4)' },
    ]);
    const get = await crux(dir, ['session', 'get', 'a']);
    expect(get.stderr).toContain('sessions.jsonl:2: hash mismatch');
    expect((await crux(dir, ['journal', 'check', '--repair'])).exitCode).toBe(0);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    expect(fs.readdirSync(join(dir, 'quarantine')).length).toBeGreaterThan(0);
    expect((await crux(dir, ['session', 'get', 'd'])).stdout).toBe('{"id":"d"}');
  });

  it('quarantines a torn tail on the next write and keeps every whole record', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{"n":1}']);
    fs.appendFileSync(join(dir, 'sessions.jsonl'), '{"v":1,"seq":2,"ts":"20');
    const torn = await crux(dir, ['journal', 'check', '--json']);
    expect(torn.exitCode).toBe(9);
    expect(JSON.parse(torn.stdout).journals[0].torn_tail).toBe(true);
    const put = await crux(dir, ['session', 'put', 'b', '{"n":2}']);
    expect(put.exitCode).toBe(0);
    expect(put.stderr).toContain('unterminated tail');
    const [q] = fs.readdirSync(join(dir, 'quarantine'));
    expect(fs.readFileSync(join(dir, 'quarantine', q!), 'utf8')).toBe('{"v":1,"seq":2,"ts":"20');
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'get', 'a'])).stdout).toBe('{"n":1}');
  });
});
