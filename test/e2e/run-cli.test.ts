// The in-process runner (test/helpers/run-cli.ts) answers as the built bin/crux does: the same exit code, stdout
// and stderr bytes, and the same journal, for writes, reads, stdin, refusals, usage errors and help; and it leaves
// the test process's environment and directory as they were.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux as spawned, freshDataDir } from '../helpers/cli';
import { crux as inProcess } from '../helpers/run-cli';

const NOW = ['--now', '2026-12-01T10:00:00Z'];
// [args, stdin, env]
const LINES: [string[], string | undefined, Record<string, string>][] = [
  [[...NOW, 'session', 'put', 's1', '{"step": 1}', '--ttl', '2h'], undefined, {}],
  [[...NOW, 'session', 'put', 's2', '--json'], '{"from":"stdin"}', {}],
  [[...NOW, '--agent', 'bot', 'session', 'put', 's3', '-'], '{not json', {}],
  [[...NOW, 'session', 'get', 's1'], undefined, {}],
  [[...NOW, 'session', 'get', 's1', '--json'], undefined, {}],
  [[...NOW, 'session', 'get', 'nope'], undefined, {}],
  [[...NOW, 'session', 'list'], undefined, { COLUMNS: '80' }],
  [[...NOW, 'session', 'close', 's1', '--summary', 'done https://u:secret@h/x'], undefined, {}],
  [[...NOW, 'case', 'record', '--stdin', '--json'], '{"task":"rotate the cert","action":"renew","outcome":"ok","tags":["tls"]}', {}],
  [[...NOW, 'case', 'retrieve', 'rotate', 'cert'], undefined, {}],
  [['session', 'put', 's4', '{}'], undefined, { CRUX_NOW: '2026-12-01T11:00:00Z', CRUX_AGENT: 'env-agent' }],
  [['session', 'list', '--all-agents', '--json'], undefined, { CRUX_NOW: '2026-12-01T11:00:00Z' }],
  [['session', 'get'], undefined, {}],
  [['session', 'bogus'], undefined, {}],
  [['session', 'put', 's1', '--help'], undefined, {}],
  [['journal', 'check', '--json'], undefined, {}],
];

describe('the in-process runner', () => {
  it('answers as bin/crux does, byte for byte, exit code and journal too', async () => {
    const [a, b] = [freshDataDir(), freshDataDir()];
    for (const [args, input, env] of LINES) {
      const opts = { env, ...(input !== undefined ? { input } : {}) };
      const viaBin = await spawned(a, args, opts);
      const here = await inProcess(b, args, opts);
      // A new case's id is random; the stores are two directories; a replay's time is measured.
      const norm = (s: string) =>
        s
          .replace(/c_[0-9a-z]{6,}/g, 'c_N')
          .replaceAll(a, 'DIR')
          .replaceAll(b, 'DIR')
          .replace(/"replay_ms":[0-9.]+/g, '"replay_ms":N');
      expect({ ...here, stdout: norm(here.stdout) }, args.join(' ')).toEqual({ ...viaBin, stdout: norm(viaBin.stdout) });
    }
    expect(fs.readFileSync(join(b, 'sessions.jsonl'), 'utf8')).toBe(fs.readFileSync(join(a, 'sessions.jsonl'), 'utf8'));
  });

  it('leaves the environment and the working directory as they were, and runs its commands one at a time', async () => {
    const env = { ...process.env };
    const cwd = process.cwd();
    const dir = freshDataDir();
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => inProcess(dir, ['session', 'put', `p${i}`, `{"i":${i}}`], { env: { CRUX_AGENT: `a${i}` } })),
    );
    expect(runs.map((r) => [r.exitCode, r.stderr])).toEqual(runs.map(() => [0, '']));
    expect(process.env).toEqual(env);
    expect(process.cwd()).toBe(cwd);
    const listed = JSON.parse((await inProcess(dir, ['--json', 'session', 'list', '--all-agents'])).stdout).sessions;
    expect(listed.map((s: any) => `${s.agent} ${s.session_id}`).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `a${i} p${i}`));
  });
});
