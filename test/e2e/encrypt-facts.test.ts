// Facts on an encrypted data directory (SPEC §13): a fact that arrived in an accepted package lies sealed in
// facts.jsonl (its JSON; the fields the bundling rules read stay plain beside it), and `handoff mint
// --include-facts` bundles exactly what a plain store bundles. `journal encrypt` and `decrypt` carry facts too.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { b3hash, b3keyed, b3raw } from '../unit/handoff/reference-blake3';

const NOW = '2026-11-30T12:00:00.000Z';
const SECRET = 'shared between crux and the daemon';
const PAYLOAD =
  '{"session_id":"task-7","session_state":{"plan":["w_3"],"note":"f_a1","n":1.0},"facts":[' +
  '{"fact_id":"f_a1","entity":"svc","value":"uses postgresfactword 16","tenant_hash":"t_42","actor":"plannerfactbot","private":false,"stored_at":"2026-11-29T20:00:00.5Z"},' +
  '{"fact_id":"f_secret","entity":"task-7","value":"privatefactword","private":true,"stored_at":"2026-11-29T20:00:02Z"},' +
  '{"fact_id":"f_about","entity":"task-7","value":"aboutfactword","stored_at":"2026-11-29T19:00:00Z"},' +
  '{"fact_id":"f_w","entity":"__work__::w_9","value":"workfactword","stored_at":"2026-11-29T20:00:01Z"}' +
  '],"created_at":"2026-11-30T11:30:00Z","source_agent":"planner","target_agent":"builder","message":null,"work_ids":["w_3","w_9"]}';
const WORDS = ['postgresfactword', 'plannerfactbot', 'privatefactword', 'aboutfactword', 'workfactword'];

function daemonPackage(): string {
  const payload = new TextEncoder().encode(PAYLOAD);
  return JSON.stringify({
    payload_b64: Buffer.from(payload).toString('base64'),
    content_hash: b3hash(payload),
    signature_b64: Buffer.from(b3keyed(b3raw(new TextEncoder().encode(SECRET)), payload), 'hex').toString('base64'),
    signature_alg: 'blake3-mac-v1',
  });
}

async function newKey(): Promise<{ file: string; id: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim() };
}

const run = (dir: string, args: string[], input?: string) =>
  crux(dir, ['--now', NOW, ...args], { env: { CRUX_MCP_HANDOFF_SECRET: SECRET }, ...(input === undefined ? {} : { input }) });

/** The package JSON of a minted envelope, without what differs from one mint to the next. */
const bundled = (stdout: string) => {
  const pkg = JSON.parse(Buffer.from(JSON.parse(stdout).payload_b64, 'base64').toString());
  return { facts: pkg.facts, work_ids: pkg.work_ids };
};

function anyFileHolds(dir: string, word: string): string | undefined {
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && fs.readFileSync(path, 'latin1').includes(word)) return path;
  }
  return undefined;
}

async function acceptAndMint(dir: string, key: string[]): Promise<ReturnType<typeof bundled>> {
  const accepted = await run(dir, [...key, 'handoff', 'accept', '-', '--as', 'builder'], daemonPackage());
  expect(accepted.exitCode, accepted.stderr).toBe(0);
  const minted = await run(dir, [...key, '--agent', 'builder', 'handoff', 'mint', 'task-7', '--include-facts']);
  expect(minted.exitCode, minted.stderr).toBe(0);
  return bundled(minted.stdout);
}

describe('facts on an encrypted data directory', () => {
  it('lie sealed, and bundle exactly as on a plain store; without the key mint is 6 naming its id, compaction needs none', async () => {
    const plain = freshDataDir();
    const sealed = freshDataDir();
    const { file, id } = await newKey();
    const expected = await acceptAndMint(plain, []);
    expect(expected.facts.map((f: any) => f.fact_id)).toEqual(['f_about', 'f_a1']);
    expect(await acceptAndMint(sealed, ['--key-file', file])).toEqual(expected);
    for (const word of WORDS) expect(anyFileHolds(sealed, word), word).toBeUndefined();
    expect(fs.readFileSync(join(sealed, 'facts.jsonl'), 'utf8')).toContain(`crux-sealed-v1:${id}:`);
    // Compaction and check need no key; the facts bundle the same after them.
    expect((await run(sealed, ['journal', 'compact'])).exitCode).toBe(0);
    expect((await run(sealed, ['journal', 'check'])).exitCode).toBe(0);
    expect((await run(sealed, ['--key-file', file, '--agent', 'builder', 'session', 'put', 'task-8', '{"note":"f_a1"}'])).exitCode).toBe(0);
    const again = await run(sealed, ['--key-file', file, '--agent', 'builder', 'handoff', 'mint', 'task-8', '--include-facts']);
    expect(bundled(again.stdout).facts.map((f: any) => f.fact_id)).toEqual(['f_a1']);
    expect(bundled(again.stdout).facts[0]).toEqual(expected.facts[1]);
    const refused = await run(sealed, ['--agent', 'builder', 'handoff', 'mint', 'task-7', '--include-facts']);
    expect(refused.exitCode).toBe(6);
    expect(refused.stderr).toContain(id);
  });

  it('journal encrypt seals them and decrypt gives back their JSON byte for byte', async () => {
    const dir = freshDataDir();
    const { file } = await newKey();
    expect((await run(dir, ['handoff', 'accept', '-', '--as', 'builder'], daemonPackage())).exitCode).toBe(0);
    const before = fs.readFileSync(join(dir, 'facts.jsonl'), 'utf8');
    expect((await run(dir, ['--key-file', file, 'journal', 'encrypt'])).exitCode).toBe(0);
    for (const word of WORDS) expect(anyFileHolds(dir, word), word).toBeUndefined();
    expect((await run(dir, ['--key-file', file, 'journal', 'decrypt'])).exitCode).toBe(0);
    const jsonOf = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).data);
    expect(jsonOf(fs.readFileSync(join(dir, 'facts.jsonl'), 'utf8'))).toEqual(jsonOf(before));
  });
});
