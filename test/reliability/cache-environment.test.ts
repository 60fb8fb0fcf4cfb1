// A cache/ crux cannot use — another user's, a regular file, a FIFO or a symlink where a derived file should be —
// is bypassed with one warning (stderr, and `warnings` with --json), never a reason to refuse an answer the
// journals can give, never a hang, and never turns a committed write into a failure (SPEC §3). Needs root for
// another uid (setpriv): where it cannot, the test fails and says so.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, journalLines, tempDir, testEnv, type Run } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectHealthy, TIMEOUT } from './harness';
import { otherUserSkipReason, titled } from '../helpers/tools';

const NOBODY = 65534;
const NOW = { CRUX_NOW: '2026-12-01T12:00:00Z' };

/** crux as user nobody, with a bound on its time: a command that blocks is killed and shows as exit -1. */
async function asNobody(dataDir: string, args: string[]): Promise<Run> {
  const run = await execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', CRUX, '--data-dir', dataDir, ...args], {
    reject: false,
    stripFinalNewline: false,
    env: testEnv({ HOME: '/tmp', ...NOW }),
    extendEnv: false,
    timeout: 20_000,
  });
  return { exitCode: run.timedOut ? -1 : (run.exitCode ?? -1), stdout: String(run.stdout), stderr: String(run.stderr) };
}

/** The seed's directory, written in this process and then handed to nobody: as nobody's own writes leave it. */
async function seed(afterwards: string[][] = []): Promise<string> {
  const dir = join(tempDir(), 'd');
  for (const args of [
    ['session', 'put', 'a', '{"n":1}'],
    ['session', 'put', 'old', '{"n":2}'],
    ['case', 'record', '--task', 'rotate the tls certificate', '--action', 'certbot renew', '--outcome', 'renewed'],
    ['case', 'record', '--task', 'restart the queue', '--action', 'systemctl restart', '--outcome', 'ok'],
    ['session', 'get', 'a'],
    ...afterwards,
  ]) {
    const run = await crux(dir, args, { env: NOW });
    expect(run.exitCode, run.stderr).toBe(0);
  }
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
  return dir;
}

const seeds = new Map<string, Promise<string>>();

/**
 * A data directory owned by nobody, with sessions and cases and their derived files (and, `withLog`, a put through
 * the index after them, which leaves its log): each seed written once a file, copied (cp -a: owner, modes and
 * times kept) a test.
 */
async function nobodysDir(withLog = false): Promise<string> {
  const key = String(withLog);
  if (!seeds.has(key)) seeds.set(key, seed(withLog ? [['session', 'put', 'a', '{"n":4}']] : []));
  const parent = tempDir();
  fs.chownSync(parent, NOBODY, NOBODY);
  const dir = join(parent, 'd');
  execFileSync('cp', ['-a', await seeds.get(key)!, dir]);
  expect(fs.readdirSync(join(dir, 'cache')).length).toBeGreaterThan(0);
  return dir;
}

const READS: string[][] = [
  ['session', 'get', 'a'],
  ['session', 'list', '--json'],
  ['session', 'list', '--stranded', '--json'],
  ['session', 'reap', '--dry-run', '--json'],
  ['case', 'retrieve', 'tls', 'certificate', '--json'],
  ['case', 'list', '--json'],
];

const FEW = [READS[0]!, READS[1]!, READS[4]!];

/** The answers of READS from a copy of the journals alone (no cache/ at all): what every cached answer must equal. */
async function replayAnswers(dir: string, reads = READS): Promise<string[]> {
  const copy = join(tempDir(), 'copy');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const file of fs.readdirSync(dir)) if (file.endsWith('.jsonl')) fs.copyFileSync(join(dir, file), join(copy, file));
  const out: string[] = [];
  for (const args of reads) out.push(answerOf((await crux(copy, args, { env: NOW })).stdout));
  return out;
}

/** An answer without its `warnings` (what the bypass adds): the rest must be the replay's, byte for byte. */
function answerOf(stdout: string): string {
  if (!stdout.startsWith('{')) return stdout;
  const { warnings: _, ...rest } = JSON.parse(stdout);
  return JSON.stringify(rest);
}

function expectOneWarning(run: Run, what: string, about: RegExp): void {
  const lines = run.stderr.split('\n').filter(Boolean);
  expect(lines, what).toHaveLength(1);
  expect(lines[0], what).toMatch(about);
  expect(run.stderr, what).not.toMatch(/internal error|this is a bug/);
}

const nobodySkip = otherUserSkipReason(CRUX);

describe.skipIf(nobodySkip !== undefined)(titled('a cache/ crux cannot use', nobodySkip), { timeout: TIMEOUT }, () => {
  it("another user's cache/ (root 0700): every read answers as a replay does, with one warning; writes commit", async () => {
    const dir = await nobodysDir();
    fs.chownSync(join(dir, 'cache'), 0, 0);
    fs.chmodSync(join(dir, 'cache'), 0o700);
    const expected = await replayAnswers(dir);
    for (const [i, args] of READS.entries()) {
      const run = await asNobody(dir, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(answerOf(run.stdout), args.join(' ')).toBe(expected[i]);
      expectOneWarning(run, args.join(' '), new RegExp(`${join(dir, 'cache')} cannot be (read|written) \\(EACCES\\)`));
    }
    const json = JSON.parse((await asNobody(dir, ['--json', 'session', 'get', 'a'])).stdout);
    expect(json.warnings).toEqual([{ file: 'cache', line: 0, reason: expect.stringMatching(/cannot be read \(EACCES\)/) }]);
    const put = await asNobody(dir, ['session', 'put', 'b', '{"n":3}']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect((await asNobody(dir, ['session', 'get', 'b'])).stdout).toBe('{"n":3}');
    const check = await asNobody(dir, ['journal', 'check']);
    expect(check.exitCode).toBe(0);
    expectOneWarning(check, 'journal check', /cache cannot be read/);
  });

  it('cache made a regular file: get, put and record answer (the put and the record once each); check and doctor say so', async () => {
    const dir = await nobodysDir();
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    fs.writeFileSync(join(dir, 'cache'), 'junk\n');
    fs.chownSync(join(dir, 'cache'), NOBODY, NOBODY);
    const expected = await replayAnswers(dir);
    for (const [i, args] of READS.entries()) {
      const run = await asNobody(dir, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(answerOf(run.stdout), args.join(' ')).toBe(expected[i]);
      expectOneWarning(run, args.join(' '), /cache is not a directory: derived files bypassed/);
    }
    const before = journalLines(dir, 'cases.jsonl').length;
    const record = await asNobody(dir, ['case', 'record', '--task', 'drain the node', '--action', 'kubectl drain', '--outcome', 'drained']);
    expect(record.exitCode, record.stderr).toBe(0);
    expect(journalLines(dir, 'cases.jsonl')).toHaveLength(before + 1);
    const put = await asNobody(dir, ['session', 'put', 'c', '{}']);
    expect(put.exitCode, put.stderr).toBe(0);
    expect(fs.readFileSync(join(dir, 'cache'), 'utf8')).toBe('junk\n');
    const doctor = await asNobody(dir, ['doctor', '--json']);
    const report = JSON.parse(doctor.stdout);
    expect(report.findings.map((f: { code: string }) => f.code)).toContain('cache_unusable');
    const check = await asNobody(dir, ['journal', 'check', '--json']);
    expect(check.exitCode).toBe(0);
    expect(JSON.parse(check.stdout).warnings).toEqual([{ file: 'cache', line: 0, reason: expect.stringMatching(/not a directory/) }]);
    await expectHealthy(dir);
  });

  it('a FIFO, a directory or a symlink in place of each derived file: no command blocks, every answer a replay’s', async () => {
    const cases = [
      ...['sessions.jsonl.idx', 'cases.jsonl.idx', 'cases.jsonl.state'].map((name) => [name, 'fifo'] as const),
      ['sessions.jsonl.idx', 'directory'] as const,
      ['cases.jsonl.state', 'symlink'] as const,
    ];
    for (const [name, kind] of cases) {
      {
        // A log exists only after a write through the index.
        const dir = await nobodysDir(true);
        const path = join(dir, 'cache', name);
        fs.rmSync(path, { force: true });
        if (kind === 'fifo') execFileSync('mkfifo', [path]);
        else if (kind === 'directory') fs.mkdirSync(path);
        else fs.symlinkSync(join(dir, 'sessions.jsonl'), path);
        fs.lchownSync(path, NOBODY, NOBODY);
        const expected = await replayAnswers(dir, FEW);
        for (const [i, args] of FEW.entries()) {
          const run = await asNobody(dir, args);
          expect(run.exitCode, `${name} as a ${kind}: ${args.join(' ')}: ${run.stderr}`).toBe(0);
          expect(answerOf(run.stdout), `${name} as a ${kind}: ${args.join(' ')}`).toBe(expected[i]);
        }
        const write = await asNobody(dir, ['case', 'record', '--task', 'x', '--action', 'y', '--outcome', 'z']);
        expect(write.exitCode, `${name} as a ${kind}: ${write.stderr}`).toBe(0);
        expect((await asNobody(dir, ['doctor'])).exitCode, `${name} as a ${kind}: doctor`).not.toBe(-1);
      }
    }
  });
});
