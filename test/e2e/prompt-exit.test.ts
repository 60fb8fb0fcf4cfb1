// The fast paths exit as soon as their command answers (cli/outcome.ts: exitWith's `promptly`), not after Node
// has torn its heap down: what that relies on is that all their output went out by write(2) before the answer.
// So a reader that is slow to start still gets every byte, a write leaves its lock directory as a normal exit
// does, and the exit code is the command's.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, crux, freshDataDir, testEnv } from '../helpers/cli';

/** crux's stdout through a pipe that nobody reads for 0.4 s (its buffer fills first): the bytes and crux's exit. */
async function throughSlowReader(dir: string, args: string[]) {
  const quoted = ['--data-dir', dir, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const run = await execa('bash', ['-c', `"$0" ${quoted} | (sleep 0.4; cat); echo "exit=\${PIPESTATUS[0]}" >&2`, CRUX], {
    reject: false,
    env: testEnv(),
    extendEnv: false,
    stripFinalNewline: false,
    encoding: 'buffer',
  });
  return { stdout: Buffer.from(run.stdout as Uint8Array), stderr: Buffer.from(run.stderr as Uint8Array).toString() };
}

describe('a fast command’s prompt exit', () => {
  it('session get (dist/fast-read.cjs): every byte of a state larger than a pipe’s buffer reaches a slow reader', async () => {
    const dir = freshDataDir();
    const state = JSON.stringify({ big: 'é'.repeat(150_000), tail: 'end' });
    expect((await crux(dir, ['session', 'put', 's', '-'], { input: state })).exitCode).toBe(0);
    const run = await throughSlowReader(dir, ['session', 'get', 's']);
    expect(run.stderr).toBe('exit=0\n');
    expect(run.stdout.toString()).toBe(state);
  });

  it('session list (dist/fast-list.cjs): a list longer than a pipe’s buffer reaches a slow reader whole', async () => {
    const dir = freshDataDir();
    const lines = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({
        session_id: `slow-reader-session-${String(i).padStart(4, '0')}`,
        agent: null,
        status: 'active',
        created_at: '2026-12-01T10:00:00.000Z',
        updated_at: `2026-12-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.000Z`,
        total_tokens: i,
        expires_at: null,
        archived: false,
        archived_at: null,
        archive_reason: null,
        actor: null,
        freshness: 'fresh',
        closed_at: null,
        outcome: null,
        summary: null,
        handoff_id: null,
        state_bytes: 2,
        state: {},
      }),
    );
    expect((await crux(dir, ['session', 'import', '-'], { input: `${lines.join('\n')}\n` })).exitCode).toBe(0);
    const direct = await crux(dir, ['--json', 'session', 'list', '--limit', '1000']);
    expect(direct.exitCode).toBe(0);
    expect(JSON.parse(direct.stdout).sessions).toHaveLength(400);
    expect(direct.stdout.length).toBeGreaterThan(128 * 1024);
    const run = await throughSlowReader(dir, ['--json', 'session', 'list', '--limit', '1000']);
    expect(run.stderr).toBe('exit=0\n');
    expect(run.stdout.toString()).toBe(direct.stdout);
  });

  it('a put, a close and a case record leave only what a normal exit leaves in the lock directory, and exit with their code', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 's', '{"a":1}'])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'close', 's'])).exitCode).toBe(0);
    expect((await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    // A fast command that fails exits with its kind's code (a closed session is final: a conflict).
    const refused = await crux(dir, ['session', 'put', 's', '{"a":2}']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toMatch(/^crux: cannot put session "s": it is closed/);
    // The lock's directory is as a normal exit leaves it: the last generation's marker, and no socket, holder or
    // queue file that outlives the process.
    expect(fs.readdirSync(join(dir, '.lock'))).toEqual([expect.stringMatching(/^g\.\d+$/)]);
  });
});
