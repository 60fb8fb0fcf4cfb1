// Every command writes through one writer: a reader that has gone (EPIPE) never turns a committed write into a crash,
// and --quiet never suppresses what a command exists to print (SPEC §8).
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CRUX, crux, freshDataDir, testEnv } from '../helpers/cli';

const NOW = '2026-11-29T21:00:00Z';

/** Runs crux into a pipe whose reader closes its end at once; crux's own exit code and stderr. */
async function intoClosedPipe(dir: string, args: string[]) {
  const quoted = ['--data-dir', dir, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const run = await execa('bash', ['-c', `"$0" ${quoted} | (exec 0<&-; true); echo "exit=\${PIPESTATUS[0]}"`, CRUX], {
    reject: false,
    env: testEnv({ CRUX_NOW: NOW, CRUX_HANDOFF_SECRET: 'pipe-test-secret' }),
    extendEnv: false,
  });
  return { exit: String(run.stdout).trim(), stderr: String(run.stderr) };
}

describe('a closed stdout', () => {
  it('handoff mint commits, exits 0 and says so in one line (no stack trace) when nobody reads the envelope', async () => {
    const dir = freshDataDir();
    // A package larger than a pipe's buffer, so the write meets the closed end whatever the timing.
    expect((await crux(dir, ['--agent', 'a', 'session', 'put', 's'], { input: `{"big":"${'x'.repeat(200_000)}"}` })).exitCode).toBe(0);
    const run = await intoClosedPipe(dir, ['--agent', 'a', 'handoff', 'mint', 's']);
    // SPEC §3: exit 0, and one line on stderr saying what was done (a wrapper must not retry it).
    expect(run.exit).toBe('exit=0');
    expect(run.stderr).toMatch(
      /^crux: committed \(minted handoff h_[0-9a-f]+; 1 record\(s\) to handoffs.jsonl, 1 record\(s\) to sessions.jsonl\), but its output could not be written \(EPIPE\): the write is durable, do not repeat it$/,
    );
    const list = await crux(dir, ['--agent', 'a', '--json', 'session', 'list']);
    expect(JSON.parse(list.stdout).sessions[0].status).toBe('handed_off');
    expect(JSON.parse((await crux(dir, ['--json', 'handoff', 'list'])).stdout).handoffs).toHaveLength(1);
  });

  it('ends every printing command quietly: completion, export, get, inspect, list, help', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 's', '{"a":1}']);
    await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']);
    for (const args of [
      ['completion', 'bash'],
      ['completion', 'zsh'],
      ['session', 'export'],
      ['case', 'export'],
      ['session', 'get', 's'],
      ['session', 'list'],
      ['case', 'list', '--json'],
      ['help', 'session'],
    ]) {
      expect(await intoClosedPipe(dir, args), args.join(' ')).toEqual({ exit: 'exit=0', stderr: '' });
    }
  });
});

describe('--quiet', () => {
  it('still prints the package of handoff mint and the bytes of session get', async () => {
    const dir = freshDataDir();
    const opts = { env: { CRUX_NOW: NOW, CRUX_HANDOFF_SECRET: 'quiet-secret' } };
    await crux(dir, ['--agent', 'a', 'session', 'put', 's', '{"n": 1.0}'], opts);
    expect((await crux(dir, ['--agent', 'a', '--quiet', 'session', 'get', 's'], opts)).stdout).toBe('{"n": 1.0}');
    const mint = await crux(dir, ['--agent', 'a', '--quiet', 'handoff', 'mint', 's'], opts);
    expect(mint.exitCode).toBe(0);
    expect(Object.keys(JSON.parse(mint.stdout))).toEqual(['payload_b64', 'content_hash', 'signature_b64', 'signature_alg']);
    // With --out the package went to the file: --quiet then prints nothing.
    const out = `${dir}.pkg.json`;
    const again = await crux(dir, ['--agent', 'a', '--quiet', 'handoff', 'export', JSON.parse(mint.stdout).content_hash, '--out', out], opts);
    expect(again).toMatchObject({ exitCode: 0, stdout: '' });
  });
});
