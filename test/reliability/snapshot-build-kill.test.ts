// kill -9 of the built binary at each crash point of the case bank's snapshot rewritten in steps
// (journal/derived/snapshot-build.ts): before a step's build file is saved, and before the new snapshot is
// installed. With a small tail and small steps (the test hooks), a few dozen writes run whole rewrites. After
// each kill, every answer equals a replay's (the same journal with no cache/), and the journal checks clean.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';

const WORDS = ['deploy', 'web', 'cache', 'index', 'lock', 'queue', 'retry', 'build', 'ship', 'merge', 'audit', 'rotate'];
const SMALL = { CRUX_TEST_SNAPSHOT_TAIL_BYTES: '2048', CRUX_TEST_SNAPSHOT_STEP_BYTES: '2048', CRUX_NOW: '2026-12-02T08:00:00Z' };

/** A write killed at a crash point: the built binary. */
const run = (dir: string, args: string[], env: Record<string, string> = {}) =>
  execa(CRUX, ['--data-dir', dir, ...args], { reject: false, env: testEnv({ ...SMALL, ...env }), extendEnv: false });
/** The seed, the reads and the check: in this process (run-cli.ts; the sizes are read a call). */
const inProcess = (dir: string, args: string[], input?: string) => crux(dir, args, { env: SMALL, ...(input === undefined ? {} : { input }) });

/** The retrieves' answers, as `--json` gives them (their warnings left aside: a replay has none to give). */
async function answers(dir: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < WORDS.length; i += 3) {
    const r = await inProcess(dir, ['--json', 'case', 'retrieve', WORDS[i]!, WORDS[i + 1]!, '--top-k', '50']);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    out.push(JSON.parse(String(r.stdout)).cases);
  }
  return out;
}

/** The same journal in a directory of its own, without cache/: what a replay answers. */
async function replayed(dir: string): Promise<unknown[]> {
  const copy = freshDataDir();
  fs.mkdirSync(copy, { recursive: true, mode: 0o700 });
  fs.copyFileSync(join(dir, 'cases.jsonl'), join(copy, 'cases.jsonl'));
  return answers(copy);
}

const caseLine = (i: number) =>
  JSON.stringify({
    task: `${WORDS[i % WORDS.length]} the ${WORDS[(i * 7 + 3) % WORDS.length]} step ${i} ${'detail '.repeat(i % 9)}`,
    action: `ran ${WORDS[(i * 5) % WORDS.length]}`,
    outcome: 'ok',
    tags: [WORDS[(i * 3) % WORDS.length]],
  });

describe('kill -9 inside the snapshot rewritten in steps', () => {
  it('at each crash point, then every answer is a replay’s and the journal checks clean', async () => {
    const dir = freshDataDir();
    // A bank whose snapshot exists (a retrieve that replayed writes it), then writes that rewrite it in steps.
    const cases = Array.from({ length: 60 }, (_, i) => caseLine(i)).join('\n');
    expect((await inProcess(dir, ['case', 'import', '-'], `${cases}\n`)).exitCode).toBe(0);
    await answers(dir);
    const kills = new Map<string, number>();
    let n = 60;
    for (const point of ['derived:before-build-save', 'derived:before-snapshot-install']) {
      kills.set(point, 0);
      for (let attempt = 0; attempt < 40 && kills.get(point)! < 2; attempt++) {
        const i = n++;
        const c = JSON.parse(caseLine(i)) as { task: string; action: string; outcome: string };
        // A record, or a retrieve that marks what it returns as reused: both write, so both take steps.
        const args =
          i % 3 === 0
            ? ['case', 'retrieve', WORDS[i % WORDS.length]!, '--mark-reused']
            : ['case', 'record', '--task', c.task, '--action', c.action, '--outcome', c.outcome];
        const r = await run(dir, args, { CRUX_TEST_CRASH_AT: point });
        if (r.signal === 'SIGKILL') {
          kills.set(point, kills.get(point)! + 1);
          expect(await answers(dir), `${point}, write ${i}`).toEqual(await replayed(dir));
        } else expect(r.exitCode, `${point}, write ${i}: ${r.stderr}`).toBe(0);
      }
    }
    // Each point was reached twice: the kills happened inside builds, not before one began.
    expect(Object.fromEntries(kills)).toEqual({ 'derived:before-build-save': 2, 'derived:before-snapshot-install': 2 });
    const check = await inProcess(dir, ['--json', 'journal', 'check']);
    expect(check.exitCode, String(check.stdout)).toBe(0);
    expect(await answers(dir)).toEqual(await replayed(dir));
  });
});
