// Encrypted at rest on a data directory (SPEC §13), through the built bin/crux: `crux key new`, the key file's
// mode, a store created with a key holding no plaintext of states or free text in any file, exit 6 naming the key
// id without the key or with another, lists/check/compaction without it, and a key given to a plain store.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { api, startUi } from '../helpers/ui';

const SECRETS = ['hunter2state', 'hunter3summary', 'hunter4reason'];
/** A case's text and the words of its task: none of them may lie in any file of an encrypted store. */
const CASE_TEXT = ['hunter5taskword', 'hunter6action', 'hunter7outcome', 'hunter8context'];
const recordCase = [
  'case',
  'record',
  '--task',
  `Fix ${CASE_TEXT[0]} flakes`,
  '--action',
  CASE_TEXT[1]!,
  '--outcome',
  CASE_TEXT[2]!,
  '--context',
  CASE_TEXT[3]!,
];

/** Every file under `dir` (journals, cache/, history/, keys/, .lock), as text. */
function everyFile(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(path, fs.readFileSync(path, 'latin1'));
  }
  return out;
}

async function newKey(): Promise<{ file: string; id: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim() };
}

describe('crux key new', () => {
  it('prints a key and its id, writing nothing else; --out creates a 0600 file and never overwrites one', async () => {
    const dir = freshDataDir();
    const r = await crux(dir, ['key', 'new']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^crux-key-v1:[A-Za-z0-9_-]{43}\n$/);
    expect(r.stderr).toMatch(/key id k-[0-9a-f]{16}/);
    expect(fs.existsSync(dir)).toBe(false);
    const json = JSON.parse((await crux(dir, ['--json', 'key', 'new'])).stdout);
    expect(Object.keys(json)).toEqual(['key', 'key_id']);
    const { file, id } = await newKey();
    expect(id).toMatch(/^k-[0-9a-f]{16}$/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = await crux(dir, ['key', 'new', '--out', file]);
    expect(again.exitCode).toBe(5);
  });
});

describe('an encrypted data directory', () => {
  it('holds no plaintext of a state or free text, anywhere; reads need the key (6 naming its id) but lists, check and compaction do not', async () => {
    const dir = freshDataDir();
    const { file, id } = await newKey();
    const withKey = (args: string[]) => crux(dir, ['--key-file', file, ...args]);
    expect((await withKey(['session', 'put', 's1', `{"x":"${SECRETS[0]}"}`])).exitCode).toBe(0);
    expect((await withKey(['session', 'close', 's1', '--summary', SECRETS[1]!])).exitCode).toBe(0);
    expect((await withKey(['session', 'put', 's2', '{"y":1}'])).exitCode).toBe(0);
    expect((await withKey(['session', 'archive', 's2', '--reason', SECRETS[2]!])).exitCode).toBe(0);
    expect((await withKey(recordCase)).exitCode).toBe(0);
    expect((await withKey(['case', 'retrieve', CASE_TEXT[0]!])).stdout).toContain(CASE_TEXT[1]);
    expect(JSON.parse(fs.readFileSync(join(dir, 'keys', 'store-key.json'), 'utf8')).key_id).toBe(id);
    // Not even the lock's note of the last writer's command line holds the free text it was given; not cache/'s word index.
    for (const [path, text] of everyFile(dir)) for (const secret of [...SECRETS, ...CASE_TEXT]) expect(text, path).not.toContain(secret);

    // Without the key: what needs plaintext is refused with 6, naming the key id, never the key.
    const keyText = fs.readFileSync(file, 'utf8').trim();
    for (const args of [
      ['session', 'get', 's1'],
      ['session', 'export'],
      ['session', 'put', 's3', '{}'],
      ['case', 'retrieve', CASE_TEXT[0]!],
      ['case', 'list'],
      recordCase,
    ]) {
      const r = await crux(dir, args);
      expect(r.exitCode, args.join(' ')).toBe(6);
      expect(r.stderr).toContain(id);
      expect(r.stderr).not.toContain(keyText);
    }
    // With another key: 6 too.
    const other = await newKey();
    const wrong = await crux(dir, ['--key-file', other.file, 'session', 'get', 's1']);
    expect(wrong.exitCode).toBe(6);
    expect(wrong.stderr).toContain(id);
    // Without it: lists (sealed text shown as such), check, compaction, reap.
    const list = JSON.parse((await crux(dir, ['--json', 'session', 'list', '--all'])).stdout).sessions;
    expect(list.map((s: any) => [s.session_id, s.status, s.summary ?? s.archive_reason, s.state_bytes])).toEqual(
      expect.arrayContaining([
        ['s1', 'closed', `[sealed:${id}]`, Buffer.byteLength(`{"x":"${SECRETS[0]}"}`)],
        ['s2', 'archived', `[sealed:${id}]`, 7],
      ]),
    );
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(dir, ['journal', 'compact'])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'reap'])).exitCode).toBe(0);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);

    for (const [path, text] of everyFile(dir)) for (const secret of [...SECRETS, ...CASE_TEXT]) expect(text, path).not.toContain(secret);
    expect((await withKey(['case', 'retrieve', CASE_TEXT[0]!])).stdout).toContain(CASE_TEXT[2]);

    // With the key, after the compaction: the bytes as stored, and the free text.
    expect((await withKey(['session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    const shown = JSON.parse((await withKey(['--json', 'session', 'list', '--all'])).stdout).sessions;
    expect(shown.map((s: any) => s.summary ?? s.archive_reason).sort()).toEqual([SECRETS[1], SECRETS[2]]);
  });

  it('doctor says whether the store is encrypted, with which key id, and whether that key was given (never a key)', async () => {
    const dir = freshDataDir();
    const key = await newKey();
    const other = await newKey();
    const doctor = async (keyArgs: string[]) => {
      const r = await crux(dir, [...keyArgs, 'doctor', '--json']);
      expect(r.stderr).not.toContain('crux-key-v1:');
      return JSON.parse(r.stdout) as { encryption: unknown; findings: { code: string; message: string }[] };
    };
    expect((await crux(dir, ['session', 'put', 'plain', '{}'])).exitCode).toBe(0);
    expect((await doctor([])).encryption).toEqual({ encrypted: false, key_id: null, key_given: null });
    const fresh = freshDataDir();
    expect((await crux(fresh, ['--key-file', key.file, 'session', 'put', 's', '{"x":1}'])).exitCode).toBe(0);
    for (const [args, given] of [
      [['--key-file', key.file], key.id],
      [[], null],
      [['--key-file', other.file], other.id],
    ] as const) {
      const r = await crux(fresh, [...args, 'doctor', '--json']);
      const report = JSON.parse(r.stdout) as { encryption: unknown; findings: { code: string; message: string }[] };
      expect(report.encryption, args.join(' ')).toEqual({ encrypted: true, key_id: key.id, key_given: given });
      const note = report.findings.find((f) => f.code === 'encrypted');
      expect(note?.message).toContain(key.id);
      expect(note?.message).toContain(given === key.id ? 'which is the key given' : 'exit 6');
      expect(r.stdout).not.toContain(fs.readFileSync(key.file, 'utf8').trim());
    }
    expect((await crux(fresh, ['doctor'])).stdout).toMatch(new RegExp(`encryption\\s+at rest, key ${key.id}`));
  });

  it('crux ui without the key: the overview counts success by tag from plain fields; a page of case text is 403 naming the key id', async () => {
    const dir = freshDataDir();
    const key = await newKey();
    for (const [task, outcome, tag] of [
      ['deploy the hunter9 service', 'success', 'deploy'],
      ['deploy again', 'failure', 'deploy'],
      ['rotate certificates', 'success', 'tls'],
    ] as const) {
      const failed = outcome === 'failure' ? ['--failure'] : [];
      const r = await crux(dir, ['--key-file', key.file, 'case', 'record', '--task', task, '--action', 'a', '--outcome', outcome, '--tag', tag, ...failed]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const want = [
      { tag: 'deploy', cases: 2, successes: 1, success_rate: 0.5 },
      { tag: 'tls', cases: 1, successes: 1, success_rate: 1 },
    ];
    for (const env of [{ CRUX_KEY_FILE: key.file }, {}]) {
      const ui = await startUi(dir, [], env);
      try {
        const tags = await api(ui, '/api/overview/tags');
        expect(tags.status, JSON.stringify(tags.doc)).toBe(200);
        expect(tags.doc.tags).toEqual(want);
        const cases = await api(ui, '/api/cases');
        if ('CRUX_KEY_FILE' in env) expect(cases.status).toBe(200);
        else {
          expect(cases.status).toBe(403);
          expect(JSON.stringify(cases.doc)).toContain(key.id);
          expect(JSON.stringify(cases.doc)).not.toContain('hunter9');
        }
      } finally {
        ui.proc.kill('SIGTERM');
        await ui.proc;
      }
    }
  });

  it('a key given to a plain store is ignored with one warning that says how to encrypt it', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 's1', '{"plain":1}'])).exitCode).toBe(0);
    const { file, id } = await newKey();
    const r = await crux(dir, ['--key-file', file, 'session', 'put', 's2', '{"plain":2}']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(id);
    expect(r.stderr).toContain('crux journal encrypt');
    expect(fs.readFileSync(join(dir, 'sessions.jsonl'), 'utf8')).toContain('{\\"plain\\":2}');
    expect(fs.existsSync(join(dir, 'keys', 'store-key.json'))).toBe(false);
  });

  it('a key file others may read is refused (5) and nothing is written', async () => {
    const dir = freshDataDir();
    const { file } = await newKey();
    fs.chmodSync(file, 0o644);
    const r = await crux(dir, ['session', 'put', 's1', '{}'], { env: { CRUX_KEY_FILE: file } });
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain(`chmod 600 ${file}`);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('journal encrypt, rekey, decrypt', () => {
  it('turn a plain store into an encrypted one and back, refusing what does not fit (5, 4, 6)', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['session', 'put', 's', `{"x":"${SECRETS[0]}"}`])).exitCode).toBe(0);
    expect((await crux(dir, recordCase)).exitCode).toBe(0);
    expect((await crux(dir, ['case', 'retrieve', CASE_TEXT[0]!])).exitCode).toBe(0);
    const key = await newKey();
    const other = await newKey();
    expect((await crux(dir, ['journal', 'encrypt'])).exitCode).toBe(5);
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'decrypt'])).exitCode).toBe(4);
    const enc = await crux(dir, ['--json', '--key-file', key.file, 'journal', 'encrypt']);
    expect(enc.exitCode, enc.stderr).toBe(0);
    expect(JSON.parse(enc.stdout)).toMatchObject({ change: 'encrypt', key_id: key.id });
    expect(enc.stderr).toBe('');
    for (const [path, text] of everyFile(dir)) for (const secret of [SECRETS[0]!, ...CASE_TEXT]) expect(text, path).not.toContain(secret);
    expect((await crux(dir, ['--key-file', key.file, 'case', 'retrieve', CASE_TEXT[0]!])).stdout).toContain(CASE_TEXT[1]);
    expect((await crux(dir, ['--key-file', other.file, 'journal', 'encrypt'])).exitCode).toBe(4);
    expect((await crux(dir, ['--key-file', other.file, 'journal', 'rekey', '--new-key-file', key.file])).exitCode).toBe(6);
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'rekey'])).exitCode).toBe(2);
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'rekey', '--new-key-file', other.file])).exitCode).toBe(0);
    expect((await crux(dir, ['--key-file', other.file, 'session', 'get', 's'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    expect((await crux(dir, ['--key-file', other.file, 'journal', 'decrypt'])).exitCode).toBe(0);
    expect(fs.existsSync(join(dir, 'keys', 'store-key.json'))).toBe(false);
    expect((await crux(dir, ['session', 'get', 's'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    expect((await crux(dir, ['case', 'retrieve', CASE_TEXT[0]!])).stdout).toContain(CASE_TEXT[1]);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
  });
});

describe('handoffs between an encrypted store and a plain one (SPEC §6 format kept)', () => {
  it('a package minted from an encrypted store is accepted by a plain one and the other way round; the ledger keeps it sealed', async () => {
    const env = { env: { CRUX_HANDOFF_SECRET: 'a secret both hosts share' } };
    const sealedDir = freshDataDir();
    const plainDir = freshDataDir();
    const { file, id } = await newKey();
    const enc = (args: string[]) => crux(sealedDir, ['--key-file', file, ...args], env);
    const out = join(tempDir(), 'pkg.json');
    expect((await enc(['--agent', 'a', 'session', 'put', 's', `{"st":"${SECRETS[0]}"}`])).exitCode).toBe(0);
    const mint = await enc(['--json', 'handoff', 'mint', 's', '--from', 'a', '--to', 'b', '--message', SECRETS[1]!, '--out', out]);
    expect(mint.exitCode, mint.stderr).toBe(0);
    for (const [path, text] of everyFile(sealedDir)) for (const secret of SECRETS.slice(0, 2)) expect(text, path).not.toContain(secret);
    const handoffId = JSON.parse(Buffer.from(JSON.parse(fs.readFileSync(out, 'utf8')).payload_b64, 'base64').toString()).handoff_id;
    // The ledger lists without the key; the package is exported again only with it, byte for byte.
    expect((await crux(sealedDir, ['handoff', 'list'], env)).stdout).toContain(handoffId);
    const noKey = await crux(sealedDir, ['handoff', 'export', handoffId], env);
    expect(noKey.exitCode).toBe(6);
    expect(noKey.stderr).toContain(id);
    expect(`${(await enc(['handoff', 'export', handoffId])).stdout}`).toBe(fs.readFileSync(out, 'utf8'));
    // A plain store accepts it.
    expect((await crux(plainDir, ['handoff', 'accept', out, '--as', 'b'], env)).exitCode).toBe(0);
    expect((await crux(plainDir, ['--agent', 'b', 'session', 'get', 's'], env)).stdout).toBe(`{"st":"${SECRETS[0]}"}`);
    // And the other way round: the encrypted store accepts a plain store's package, keeping it sealed.
    const back = join(tempDir(), 'back.json');
    expect((await crux(plainDir, ['--agent', 'b', 'session', 'put', 's2', `{"st":"${SECRETS[2]}"}`], env)).exitCode).toBe(0);
    expect((await crux(plainDir, ['handoff', 'mint', 's2', '--from', 'b', '--to', 'a', '--out', back], env)).exitCode).toBe(0);
    expect((await enc(['handoff', 'accept', back, '--as', 'a'])).exitCode).toBe(0);
    expect((await enc(['--agent', 'a', 'session', 'get', 's2'])).stdout).toBe(`{"st":"${SECRETS[2]}"}`);
    for (const [path, text] of everyFile(sealedDir)) for (const secret of SECRETS) expect(text, path).not.toContain(secret);
  });
});

describe('adapters take the key from the environment as the CLI does', () => {
  it('a lifecycle hook writes sealed with CRUX_KEY_FILE, and is refused (6) without it', async () => {
    const dir = freshDataDir();
    const { file, id } = await newKey();
    const payload = (sid: string) => JSON.stringify({ session_id: sid, hook_event_name: 'SessionStart', cwd: '/tmp', source: 'startup' });
    expect((await crux(dir, ['--key-file', file, 'session', 'put', 's', '{}'])).exitCode).toBe(0);
    const hook = await crux(dir, ['hook', 'claude-code'], { input: payload('hk1'), env: { CRUX_KEY_FILE: file } });
    expect(hook.exitCode, hook.stderr).toBe(0);
    const record = fs.readFileSync(join(dir, 'sessions.jsonl'), 'utf8').trim().split('\n').at(-1)!;
    expect(JSON.parse(record).data.state).toMatch(new RegExp(`^crux-sealed-v1:${id}:`));
    const refused = await crux(dir, ['hook', 'claude-code'], { input: payload('hk2') });
    expect(refused.exitCode).toBe(6);
    expect(refused.stderr).toContain(id);
  });
});
