// The built binary after cache/ was lost, with the case bank's snapshot built by streaming (CRUX_TEST_STREAM_BYTES
// lowers the journal size it starts at): the same stdout bytes as a replay, only the snapshot and the index left in cache/; a
// kill -9 before it is installed leaves the journal whole and the next call answering as a replay, and a temp file
// such a kill left is swept once stale.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, testEnv } from '../helpers/cli';

const WORDS = ['deploy', 'web', 'cache', 'index', 'lock', 'queue', 'retry', 'build', 'ship', 'merge', 'audit', 'rotate', 'søk', '東京'];
const STREAM = { CRUX_TEST_STREAM_BYTES: '1', CRUX_NOW: '2026-12-02T08:00:00Z' };
const REPLAY = { CRUX_TEST_STREAM_BYTES: String(2 ** 50), CRUX_NOW: '2026-12-02T08:00:00Z' };

const run = (dir: string, args: string[], env: Record<string, string>, input?: string) =>
  execa(CRUX, ['--data-dir', dir, ...args], { reject: false, input, env: testEnv(env), extendEnv: false });

const caseLine = (i: number) =>
  JSON.stringify({
    task: `${WORDS[i % WORDS.length]} the ${WORDS[(i * 7 + 3) % WORDS.length]} step ${i}`,
    action: `ran ${WORDS[(i * 5) % WORDS.length]}`,
    outcome: 'ok',
    success: i % 4 !== 0,
    reward: (i % 10) / 10,
    tags: [WORDS[(i * 3) % WORDS.length]!],
  });

async function seeded(): Promise<string> {
  const dir = freshDataDir();
  const lines = Array.from({ length: 400 }, (_, i) => caseLine(i)).join('\n');
  expect((await run(dir, ['case', 'import', '-'], REPLAY, `${lines}\n`)).exitCode).toBe(0);
  for (let i = 0; i < 6; i++) {
    const r = await run(dir, ['case', 'retrieve', WORDS[i]!, '--mark-reused'], REPLAY);
    expect(r.exitCode, String(r.stderr)).toBe(0);
  }
  return dir;
}

const QUERIES = [['deploy', 'web'], ['søk'], ['東京', 'retry', 'ship'], ['nothing']];

/** stdout of each retrieve and of `case list`, byte for byte. */
async function outputs(dir: string, env: Record<string, string>): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await run(dir, ['--json', 'case', 'retrieve', ...q, '--top-k', '20'], env);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    out.push(String(r.stdout));
  }
  const list = await run(dir, ['--json', 'case', 'list'], env);
  out.push(String(list.stdout));
  return out;
}

/** The journal alone in a directory of its own, replayed. */
async function replayed(dir: string): Promise<string[]> {
  const copy = freshDataDir();
  fs.mkdirSync(copy, { recursive: true, mode: 0o700 });
  fs.copyFileSync(join(dir, 'cases.jsonl'), join(copy, 'cases.jsonl'));
  return outputs(copy, REPLAY);
}

describe('the case bank after cache/ is lost, streamed', () => {
  it('answers with a replay’s bytes and leaves only the snapshot and the index in cache/', async () => {
    const dir = await seeded();
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    const first = await run(dir, ['--json', 'case', 'retrieve', 'deploy', 'web'], STREAM);
    expect(first.exitCode, String(first.stderr)).toBe(0);
    expect(first.stderr).toBe('');
    // The snapshot, and the index rebuilt in the same scan (its manifest and one partition): no scratch file left.
    const left = fs.readdirSync(join(dir, 'cache')).sort();
    expect(left.filter((n) => !/^cases\.jsonl\.idx\.[0-9a-f]{8}$/.test(n))).toEqual(['cases.jsonl.idx', 'cases.jsonl.state']);
    expect(left).toHaveLength(3);
    expect(await outputs(dir, STREAM)).toEqual(await replayed(dir));
  });

  it('killed before the snapshot is installed: the journal checks clean and the next call answers as a replay', async () => {
    const dir = await seeded();
    fs.rmSync(join(dir, 'cache'), { recursive: true });
    const before = fs.readFileSync(join(dir, 'cases.jsonl'));
    const killed = await run(dir, ['case', 'retrieve', 'deploy'], { ...STREAM, CRUX_TEST_CRASH_AT: 'derived:before-rename' });
    expect(killed.signal).toBe('SIGKILL');
    expect(fs.readFileSync(join(dir, 'cases.jsonl')).equals(before)).toBe(true);
    const temps = fs.readdirSync(join(dir, 'cache')).filter((n) => n.endsWith('.tmp'));
    expect(temps).toHaveLength(1);
    expect(fs.existsSync(join(dir, 'cache', 'cases.jsonl.state'))).toBe(false);
    // A fresh temp is left alone (a build may be writing it); one untouched for long is swept by the next build.
    expect(await outputs(dir, STREAM)).toEqual(await replayed(dir));
    expect(fs.existsSync(join(dir, 'cache', temps[0]!))).toBe(true);
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(join(dir, 'cache', temps[0]!), old, old);
    fs.rmSync(join(dir, 'cache', 'cases.jsonl.state'));
    expect(await outputs(dir, STREAM)).toEqual(await replayed(dir));
    expect(fs.readdirSync(join(dir, 'cache')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    const check = await run(dir, ['journal', 'check'], STREAM);
    expect(check.exitCode, String(check.stdout)).toBe(0);
  });
});
