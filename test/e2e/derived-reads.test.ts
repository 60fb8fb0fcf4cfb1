// A reader that replays (a whole list) leaves a current index as it is: building it again wrote a new base at
// every such read, and a store that is only read (a dashboard polling its list) gathered old bases without end.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const cacheFiles = (dir: string) =>
  fs
    .readdirSync(join(dir, 'cache'))
    .map((name) => `${name}:${fs.statSync(join(dir, 'cache', name)).ino}`)
    .sort();

describe('reads and the derived files', () => {
  it('lists, gets and their --json forms leave a current index untouched, file for file', async () => {
    const dir = freshDataDir();
    for (const id of ['s1', 's2', 's3']) expect((await crux(dir, ['session', 'put', id, '{"a":1}'])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'list'])).exitCode).toBe(0);
    const before = cacheFiles(dir);
    for (const args of [
      ['session', 'list'],
      ['session', 'list', '--json'],
      ['session', 'ls', '--all'],
      ['session', 'get', 's2'],
      ['session', 'list', '--stranded'],
    ]) {
      const run = await crux(dir, args);
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      expect(cacheFiles(dir), args.join(' ')).toEqual(before);
    }
  });

  it('a lost cache/ is still made again by the next read, and then left as it is', async () => {
    const dir = freshDataDir();
    for (const id of ['s1', 's2']) expect((await crux(dir, ['session', 'put', id, '{"a":1}'])).exitCode).toBe(0);
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    const first = await crux(dir, ['session', 'list', '--json']);
    expect(first.exitCode).toBe(0);
    const made = cacheFiles(dir);
    expect(made.some((f) => f.startsWith('sessions.jsonl.idx'))).toBe(true);
    const again = await crux(dir, ['session', 'list', '--json']);
    expect(again.stdout).toBe(first.stdout);
    expect(cacheFiles(dir)).toEqual(made);
  });
});
