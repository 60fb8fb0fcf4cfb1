// Retrieve after many single records (the snapshot's delta, cache/cases.jsonl.state-delta): the first read
// folds them and keeps them, the next reads apply them; every answer equals a replay of the journal alone.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const QUERIES = ['tls certificate', 'nginx restart', 'late words', 'rotate keys late'];

async function json(dir: string, args: string[]): Promise<any> {
  const run = await crux(dir, ['--json', ...args]);
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

/** The answers of a copy of the journal alone (no cache/): a replay. */
async function replayed(dir: string, args: string[]): Promise<any> {
  const alone = freshDataDir();
  fs.mkdirSync(alone, { recursive: true });
  fs.copyFileSync(join(dir, 'cases.jsonl'), join(alone, 'cases.jsonl'));
  return json(alone, args);
}

describe('case retrieve after single records since the snapshot', () => {
  it('answers as a replay does: on the read that keeps the delta, the reads that apply it, after another write', async () => {
    const dir = freshDataDir();
    const seed = Array.from({ length: 40 }, (_, i) =>
      JSON.stringify({
        case_id: `c_seed${i}`,
        task: `${i % 2 ? 'rotate the tls certificate' : 'nginx restart'} step${i}`,
        action: 'a',
        outcome: 'o',
        reward: (i % 7) / 7,
      }),
    ).join('\n');
    expect((await crux(dir, ['case', 'import', '-'], { input: `${seed}\n` })).exitCode).toBe(0);
    // Single records since: new cases, a replaced one, a deleted one.
    for (let i = 0; i < 17; i++) {
      expect((await crux(dir, ['case', 'record', '--task', `late words ${i % 3 ? 'tls' : 'keys'} n${i}`, '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    }
    expect(
      (await crux(dir, ['case', 'import', '-'], { input: `${JSON.stringify({ case_id: 'c_seed3', task: 'late rotate keys', action: 'b', outcome: 'p' })}\n` }))
        .exitCode,
    ).toBe(0);
    expect((await crux(dir, ['case', 'delete', 'c_seed4', '--yes'])).exitCode).toBe(0);
    const delta = join(dir, 'cache', 'cases.jsonl.state-delta');
    for (const round of ['folds and keeps', 'applies']) {
      for (const q of QUERIES)
        expect(await json(dir, ['case', 'retrieve', q, '--top-k', '20']), `${round}: ${q}`).toEqual(
          await replayed(dir, ['case', 'retrieve', q, '--top-k', '20']),
        );
      expect(fs.existsSync(delta), round).toBe(true);
    }
    expect(await json(dir, ['case', 'list'])).toEqual(await replayed(dir, ['case', 'list']));
    // --mark-reused writes through the same state; the next reads still agree with a replay.
    expect((await json(dir, ['case', 'retrieve', 'late words', '--mark-reused'])).results.length).toBeGreaterThan(0);
    for (const q of QUERIES)
      expect(await json(dir, ['case', 'retrieve', q, '--top-k', '20'])).toEqual(await replayed(dir, ['case', 'retrieve', q, '--top-k', '20']));
  });
});
