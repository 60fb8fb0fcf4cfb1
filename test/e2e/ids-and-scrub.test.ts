// What reaches the data directory and the operator's screen: ids that look alike are refused, package agents are
// agent names, and no credential of a URL survives, however it is written (SPEC §1, §6, §7, §8).
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, snapshotDir, testEnv } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';
import { b3hash, b3keyed, b3raw } from '../unit/handoff/reference-blake3';

const NOW = '2026-11-29T21:00:00Z';
const SECRET = 'ids-and-scrub secret';
const env = { CRUX_NOW: NOW, CRUX_MCP_HANDOFF_SECRET: SECRET };

/** A MAC-signed package as a Crux daemon mints one, with whatever agents it names. */
function daemonPackage(agents: string): string {
  const payload = Buffer.from(
    `{"session_id":"s","session_state":{"a":1},"facts":[],"created_at":"2026-11-29T20:30:00Z",${agents},"message":null,"work_ids":[]}`,
  );
  const mac = b3keyed(b3raw(new Uint8Array(Buffer.from(SECRET))), new Uint8Array(payload));
  return JSON.stringify({
    payload_b64: payload.toString('base64'),
    content_hash: b3hash(new Uint8Array(payload)),
    signature_b64: Buffer.from(mac, 'hex').toString('base64'),
    signature_alg: 'blake3-mac-v1',
  });
}

const journalsOf = (dir: string) =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => fs.readFileSync(join(dir, f), 'utf8'))
        .join('')
    : '';

describe('ids and agent names that look like others', () => {
  it('are refused with exit 5 wherever they come in: a session id, --agent, --actor, a case id; nothing is written', async () => {
    const dir = freshDataDir();
    for (const bad of ['admin\u202egnp.exe', 'zero\u200bwidth', '\ufffd\ufffd', 'bom\ufeff']) {
      for (const args of [
        ['session', 'put', bad, '{}'],
        ['--agent', bad, 'session', 'put', 'ok', '{}'],
        ['--actor', bad, 'session', 'put', 'ok', '{}'],
        ['case', 'show', bad],
      ]) {
        const run = await crux(dir, args);
        expect(run.exitCode, args.join(' ')).toBe(5);
        expect(run.stderr).toMatch(/^crux: .*(invisible or format character|replacement character) .*\n$/);
        expect(run.stderr, 'the character is shown escaped, never raw').not.toMatch(/[\u202e\u200b\ufffd\ufeff]/);
      }
    }
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('two ids given as invalid UTF-8 on argv do not become one (\\xff\\xfe and \\xfe\\xff)', async () => {
    const dir = freshDataDir();
    const run = await execa('bash', ['-c', `"$0" --data-dir "$1" session put $'\\xff\\xfe' '{"a":1}'; echo "exit=$?"`, CRUX, dir], {
      reject: false,
      env: testEnv(),
      extendEnv: false,
    });
    expect(String(run.stdout)).toBe('exit=5');
    expect(String(run.stderr)).toContain('U+FFFD');
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a package whose source_agent or target_agent is not an agent name is refused (5) by accept and inspect, and mint refuses to make one', async () => {
    const dir = freshDataDir();
    await crux(dir, ['--agent', 'a', 'session', 'put', 's', '{}'], { env });
    const before = snapshotDir(dir);
    for (const agents of [
      '"source_agent":"","target_agent":null',
      '"source_agent":"\\u001b]0;OWNED\\u0007\\u001b[2J","target_agent":null',
      '"source_agent":"p","target_agent":""',
      '"source_agent":"p\\u202e","target_agent":"b"',
      '"source_agent":"p","target_agent":"b\\u0000"',
    ]) {
      const pkg = daemonPackage(agents);
      for (const command of ['accept', 'inspect']) {
        const run = await crux(dir, ['handoff', command, '-', '--as', 'b'], { env, input: pkg });
        expect(run.exitCode, `${command} ${agents}`).toBe(5);
        expect(run.stderr).toMatch(/is not an agent name/);
        expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
      }
    }
    expect(snapshotDir(dir)).toEqual(before);
    for (const args of [
      ['--to', ''],
      ['--to', 'b\u200b'],
      ['--from', 'a\u202e'],
    ]) {
      expect((await crux(dir, ['--agent', 'a', 'handoff', 'mint', 's', ...args], { env })).exitCode, args.join(' ')).toBe(5);
    }
    expect(snapshotDir(dir)).toEqual(before);
    // The well-formed package of the same shape goes through.
    expect((await crux(dir, ['handoff', 'accept', '-', '--as', 'b'], { env, input: daemonPackage('"source_agent":"p","target_agent":"b"') })).exitCode).toBe(0);
  });
});

describe('credentials in URLs', () => {
  const forms = ['see //u:SECRET@h/x', 'next=https%3A%2F%2Fu%3ASECRET%40h', 'x=https%253A%252F%252Fu%253ASECRET%2540h', 'https://u:SECRET@h/y'];

  it('are removed from every free-text field before it is stored or shown, in each form (SPEC §7)', async () => {
    const dir = freshDataDir();
    for (const text of forms) {
      const rec = await crux(dir, ['--json', 'case', 'record', '--task', text, '--action', text, '--outcome', text, '--context', text, '--receipt', text]);
      expect(rec.exitCode).toBe(0);
      expect(rec.stdout).not.toContain('SECRET');
    }
    await crux(dir, ['--agent', 'a', 'session', 'put', 's1', '{}']);
    await crux(dir, ['--agent', 'a', 'session', 'put', 's2', '{}']);
    await crux(dir, ['--agent', 'a', 'session', 'put', 's3', '{}']);
    const outputs = [
      await crux(dir, ['--agent', 'a', 'session', 'archive', 's1', '--reason', forms.join(' ')]),
      await crux(dir, ['--agent', 'a', 'session', 'close', 's2', '--summary', forms.join(' ')]),
      await crux(dir, ['--agent', 'a', 'handoff', 'mint', 's3', '--message', forms.join(' '), '--requester', forms[1]!, '--source', forms[0]!], { env }),
      await crux(dir, ['case', 'list']),
      await crux(dir, ['--json', 'case', 'list']),
      await crux(dir, ['--json', '--agent', 'a', 'session', 'list', '--all']),
    ];
    for (const run of outputs) {
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout + run.stderr).not.toContain('SECRET');
    }
    const pkg = JSON.parse(outputs[2]!.stdout);
    expect(Buffer.from(pkg.payload_b64, 'base64').toString()).not.toContain('SECRET');
    expect(journalsOf(dir)).not.toContain('SECRET');
    // Newest first: the second form recorded is the third listed.
    expect(JSON.parse(outputs[4]!.stdout).cases[2].task).toBe('next=https%3A%2F%2Fh');
  });

  it('are not echoed by an error that quotes a bad option value, in either error format', async () => {
    const dir = freshDataDir();
    const runs = [
      await crux(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--reward', 'https://u:LEAK@h']),
      await crux(dir, ['--json', 'case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--reward', 'https://u:LEAK@h']),
      await crux(dir, ['case', 'retrieve', 'x', '--top-k', '//u:LEAK@h']),
      await crux(dir, ['session', 'put', 'x', '{}', '--ttl', 'https%3A%2F%2Fu%3ALEAK%40h']),
      await crux(dir, ['session', 'get', 'x', '--bogus=https://u:LEAK@h']),
      await crux(dir, ['session', 'close', 'x', '--outcome', 'https://u:LEAK@h']),
    ];
    for (const run of runs) {
      expect([2, 5]).toContain(run.exitCode);
      expect(run.stderr).toMatch(/^(crux: |\{"error")/);
      expect(run.stderr).not.toContain('LEAK');
    }
    expect(runs[0]!.stderr).toContain('https://h');
  });
});
