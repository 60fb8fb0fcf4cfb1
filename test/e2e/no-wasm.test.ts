// Without WebAssembly (`node --jitless`: V8 then has none) crux hashes record lines in plain JavaScript (src/shared/sha256-small.ts) instead of
// the WebAssembly kernel (src/shared/kernels.wat): the same journal, byte for byte, and the same output as the normal path, for commands
// that write, read and verify records, a replay long enough to switch to node:crypto included.
import * as fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir, tempDir, testEnv } from '../helpers/cli';

const NOW = '2026-12-01T12:00:00Z';
// More text than shared/sha256.ts hashes before it loads node:crypto (8,192 UTF-16 units), in one process.
const IMPORT = Array.from({ length: 300 }, (_, i) =>
  JSON.stringify({ session_id: `m${i}`, state: { step: i, note: `ünï ${'😀'.repeat(i % 7)} ${'x'.repeat(3 * i)}` } }),
).join('\n');
const STEPS: [string[], string?][] = [
  [['session', 'put', 's1', '{"step":1,"note":"héllo 😀 \\ud800"}', '--ttl', '2h']],
  [['session', 'put', 's2', '{"b":[1,2.5]}']],
  [['session', 'get', 's1']],
  [['session', 'put', 's1', '{"step":2}', '--add-tokens', '5']],
  [['session', 'close', 's2', '--outcome', 'failed']],
  [['session', 'get', 's2', '--json']],
  [['session', 'import', '-'], IMPORT],
  [['session', 'get', 'm299', '--json']],
  [['journal', 'check']],
];

describe('without WebAssembly (node --jitless)', () => {
  it('the Node of these runs has no WebAssembly', () => {
    const env = testEnv({ NODE_OPTIONS: '--jitless' });
    expect(execFileSync(process.execPath, ['-p', 'typeof WebAssembly'], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()).toBe(
      'undefined',
    );
  });

  it('session put, get, close, import and journal check write and print what the normal path does', async () => {
    const normal = freshDataDir();
    const jitless = freshDataDir();
    // Its own code cache directory: a jitless V8 rejects the shipped cache and writes one of its own.
    const env = { CRUX_NOW: NOW, XDG_CACHE_HOME: tempDir() };
    // journal check prints its replay's duration and the directory.
    const steady = (s: string, dir: string) => s.replaceAll(dir, 'DIR').replace(/\d+(\.\d+)? ms/g, 'N ms');
    for (const [args, input] of STEPS) {
      const a = await crux(normal, args, { env, input: input ?? '' });
      const b = await crux(jitless, args, { env: { ...env, NODE_OPTIONS: '--jitless' }, input: input ?? '' });
      expect(a.exitCode, args.join(' ')).toBe(0);
      expect([b.exitCode, steady(b.stdout, jitless)], args.join(' ')).toEqual([0, steady(a.stdout, normal)]);
      // V8 says on stderr that --jitless turns WebAssembly off; crux itself says nothing more.
      expect(
        b.stderr.split('\n').filter((l) => l !== '' && !/expose.wasm/.test(l)),
        args.join(' '),
      ).toEqual(a.stderr.split('\n').filter((l) => l !== ''));
    }
    const journal = (dir: string) => fs.readFileSync(join(dir, 'sessions.jsonl'));
    expect(journal(jitless).equals(journal(normal))).toBe(true);
    expect(journal(normal).toString('utf8').split('\n').length).toBe(2 + 1 + 1 + 300 + 1);
  });
});
