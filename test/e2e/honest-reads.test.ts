// What a read says, over the built bin/crux (its fast bundles included): the answer a replay gives whatever cache/
// holds (#47), the damage it passed over on stderr and in --json's `warnings`, each problem once per command (#53),
// and `journal check` of a store it cannot lock (SPEC §3). In-process twins: test/unit/journal/index-behind.test.ts,
// test/reliability/reads-equal-replay.property.test.ts.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import * as sessions from '../../src/domain/session/store';
import type { AgentName, LogicalSessionId } from '../../src/shared/ids';
import { CRUX, tempDir, testEnv, type Run } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { otherUserSkipReason, titled } from '../helpers/tools';

const quiet = { warn: () => {} };
const NOBODY = 65534;

/** `n` unscoped sessions s1…sn (and `ag`'s s1), written in-process, one put each. */
async function puts(root: string, n: number): Promise<void> {
  const dir = new DataDir(root, quiet, 5_000);
  const at = Date.parse('2026-11-01T00:00:00Z');
  for (let i = 1; i <= n; i++) await sessions.putSession({ dir, agent: undefined, now: at + i * 60_000 }, `s${i}` as LogicalSessionId, { state: '{}' });
  await sessions.putSession({ dir, agent: 'ag' as AgentName, now: at }, 's1' as LogicalSessionId, { state: '{}' });
}

const stderrLines = (run: Run, about: RegExp) => run.stderr.split('\n').filter((l) => about.test(l));
const warningsOf = (run: Run) => (JSON.parse(run.stdout) as { warnings?: { file: string; line: number; reason: string }[] }).warnings ?? [];

describe('reads answer as a replay, and tell what they passed over once', () => {
  it('a limited list over a cache/ restored from before records of earlier times lists as a replay does (#47)', async () => {
    const dir = join(tempDir(), 'd');
    const at = (t: string) => ({ env: { CRUX_NOW: t } });
    for (let i = 1; i <= 9; i++) expect((await crux(dir, ['session', 'put', `s${i}`, '{}'], at(`2026-11-01T00:0${i}:00Z`))).exitCode).toBe(0);
    await crux(dir, ['session', 'list']);
    const saved = join(tempDir(), 'saved');
    fs.cpSync(join(dir, 'cache'), saved, { recursive: true });
    for (let i = 10; i <= 14; i++) await crux(dir, ['session', 'put', `s${i}`, '{}'], at(`2026-11-01T00:00:${i}.000Z`));
    const ids = async (args: string[]) => {
      fs.rmSync(join(dir, 'cache'), { recursive: true });
      fs.cpSync(saved, join(dir, 'cache'), { recursive: true });
      const run = await crux(dir, ['session', 'list', '--limit', '4', '--json', ...args], at('2026-11-01T01:00:00Z'));
      expect(run.exitCode, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { sessions: { session_id: string }[] }).sessions.map((s) => s.session_id);
    };
    expect(await ids([])).toEqual(['s9', 's8', 's7', 's6']);
    expect(await ids(['--all-agents'])).toEqual(['s9', 's8', 's7', 's6']);
  });

  it('limited lists report a torn tail on stderr and in warnings, as session list and get do (#53.1)', async () => {
    const dir = join(tempDir(), 'd');
    await puts(dir, 4);
    await crux(dir, ['session', 'list']);
    fs.appendFileSync(join(dir, 'sessions.jsonl'), '{"v":1,"seq":6,"ev');
    for (const args of [
      ['session', 'list', '--limit', '2'],
      ['session', 'list', '--stranded', '--limit', '2'],
      ['session', 'list', '--limit', '2', '--json'],
      ['session', 'list', '--stranded', '--limit', '2', '--json'],
      ['session', 'list'],
      ['session', 'get', 's1'],
    ]) {
      const run = await crux(dir, args, { env: { CRUX_NOW: '2026-11-03T00:00:00Z' } });
      expect(run.exitCode, args.join(' ')).toBe(0);
      expect(stderrLines(run, /sessions\.jsonl:6: torn tail/), args.join(' ')).toHaveLength(1);
      if (args.includes('--json'))
        expect(warningsOf(run), args.join(' ')).toEqual([{ file: 'sessions.jsonl', line: 6, reason: expect.stringMatching(/^torn tail/) }]);
    }
  });

  it('one damaged line is told once per command, however many of its reads met it (#53.2)', async () => {
    const dir = join(tempDir(), 'd');
    await puts(dir, 40);
    const path = join(dir, 'sessions.jsonl');
    const lines = fs.readFileSync(path, 'utf8').split('\n');
    // A bit flipped in line 34's JSON: `"` → `#`.
    lines[33] = lines[33]!.replace('"seq"', '#seq"');
    fs.writeFileSync(path, lines.join('\n'));
    for (const args of [
      ['session', 'list', '--limit', '4'],
      ['session', 'list', '--limit', '4', '--json'],
      ['--agent', 'ag', 'session', 'get', 's1'],
      ['--agent', 'ag', 'session', 'get', 's1', '--json'],
      ['--agent', 'ag', 'session', 'get', 's2'],
      ['session', 'list', '--stranded', '--limit', '2', '--json'],
    ]) {
      fs.rmSync(join(dir, 'cache'), { recursive: true, force: true });
      const run = await crux(dir, args, { env: { CRUX_NOW: '2026-11-03T00:00:00Z' } });
      expect(stderrLines(run, /sessions\.jsonl:34:/), args.join(' ')).toHaveLength(1);
      if (args.includes('--json'))
        expect(
          warningsOf(run).filter((w) => w.line === 34),
          args.join(' '),
        ).toHaveLength(1);
    }
  });

  const nobodySkip = otherUserSkipReason(CRUX);
  it.skipIf(nobodySkip !== undefined)(
    titled('journal check verifies a store it cannot lock without --repair, and says a writer could race it (#53.3)', nobodySkip),
    async () => {
      const parent = tempDir();
      const dir = join(parent, 'd');
      await puts(dir, 3);
      const nobodySkip = async (args: string[]): Promise<Run> => {
        const run = await execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', CRUX, '--data-dir', dir, ...args], {
          reject: false,
          env: testEnv({ HOME: '/tmp' }),
          extendEnv: false,
        });
        return { exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) };
      };
      // Read-only for the user that runs crux: every file readable, nothing writable (the lock's included).
      const readOnly = () => execa('chmod', ['-R', 'a+rX,a-w', parent]);
      await readOnly();
      const healthy = await nobodySkip(['journal', 'check', '--json']);
      expect(healthy.exitCode, healthy.stderr).toBe(0);
      expect(JSON.parse(healthy.stdout).healthy).toBe(true);
      expect(stderrLines(healthy, /\.lock .*without the writers' lock, so a live writer could race this check/)).toHaveLength(1);
      // Damage is found as ever (9); a repair still needs the lock (5, naming it).
      await execa('chmod', ['-R', 'u+w', parent]);
      fs.appendFileSync(join(dir, 'sessions.jsonl'), 'not a record\n');
      await readOnly();
      const damaged = await nobodySkip(['journal', 'check']);
      expect(damaged.exitCode, damaged.stderr).toBe(9);
      const repair = await nobodySkip(['journal', 'check', '--repair']);
      expect(repair.exitCode).toBe(5);
      expect(repair.stderr).toMatch(/\.lock/);
      await execa('chmod', ['-R', 'u+w', parent]);
    },
  );
});
