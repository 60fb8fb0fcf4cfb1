import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux as spawned, describeEachStore, freshDataDir, freshStore, journalLines, type Run, snapshotDir, tempDir } from '../helpers/cli';
// In-process (the program's answers); the races between processes spawn bin/crux.
import { crux } from '../helpers/run-cli';
import { b3derive, b3hash, b3keyed, b3raw } from '../unit/handoff/reference-blake3';

const NOW = '2026-11-29T21:00:00Z';
const env = (extra: Record<string, string> = {}) => ({ CRUX_NOW: NOW, ...extra });
const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const CRUX_CONTEXT = 'crux 2026-11-29 handoff blake3-mac-v1 key from CRUX_HANDOFF_SECRET';

interface Envelope {
  payload_b64: string;
  content_hash: string;
  signature_b64: string;
  signature_alg: string;
}

const payloadOf = (e: Envelope) => Buffer.from(e.payload_b64, 'base64');
const packageOf = (e: Envelope) => JSON.parse(payloadOf(e).toString('utf8'));

async function ok(run: Promise<Run>): Promise<Run> {
  const r = await run;
  expect(r.exitCode, `stderr: ${r.stderr}`).toBe(0);
  return r;
}

/** A data dir with session `s1` of agent alice, minted for bob; returns the envelope text. */
async function mintedSetup(mintArgs: string[] = [], extraEnv: Record<string, string> = {}, dir = freshDataDir()) {
  const state = '{"step": 3, "refs": ["w_1", "f_9"], "big": 12345678901234567890, "one": 1.0}';
  await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's1', state], { env: env(extraEnv) }));
  const mint = await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's1', '--to', 'bob', ...mintArgs], { env: env(extraEnv) }));
  return { dir, state, text: mint.stdout, envelope: JSON.parse(mint.stdout) as Envelope };
}

/** A package exactly as a Crux daemon mints one, built with the reference BLAKE3 and CRUX_MCP_HANDOFF_SECRET's derivation. */
function daemonPackage(payloadText: string, secret: string): string {
  const payload = enc(payloadText);
  const key = b3raw(enc(secret));
  return JSON.stringify({
    payload_b64: Buffer.from(payload).toString('base64'),
    content_hash: b3hash(payload),
    signature_b64: Buffer.from(b3keyed(key, payload), 'hex').toString('base64'),
    signature_alg: 'blake3-mac-v1',
  });
}

function writeTemp(name: string, text: string | Uint8Array): string {
  const path = join(tempDir(), name);
  fs.writeFileSync(path, text);
  return path;
}

describe('mint and accept', () => {
  it('round trip: the session lands under the receiver, the source is handed_off, JSON shapes hold', async () => {
    const { dir, state, text, envelope } = await mintedSetup(['--message', 'see https://user:tok@git.example/x']);
    // mint prints the envelope itself, fields in the daemon's order
    expect(Object.keys(envelope)).toEqual(['payload_b64', 'content_hash', 'signature_b64', 'signature_alg']);
    expect(text).toBe(`${JSON.stringify(envelope)}\n`);
    const pkg = packageOf(envelope);
    expect(Object.keys(pkg)).toEqual([
      'session_id',
      'session_state',
      'facts',
      'created_at',
      'source_agent',
      'target_agent',
      'message',
      'work_ids',
      'handoff_id',
      'expires_at',
    ]);
    expect(pkg.message).toBe('see https://git.example/x');
    expect(pkg.work_ids).toEqual(['w_1']);
    expect(pkg.expires_at).toBe('2026-11-30T21:00:00.000Z');
    // The state travels verbatim, its whitespace included (SPEC §6).
    expect(payloadOf(envelope).toString()).toContain(`"session_state":${state},`);

    const source = JSON.parse((await ok(crux(dir, ['--agent', 'alice', 'session', 'get', 's1', '--json'], { env: env() }))).stdout);
    expect(source.session.status).toBe('handed_off');

    const file = writeTemp('pkg.json', text);
    const accept = await ok(crux(dir, ['handoff', 'accept', file, '--as', 'bob', '--json'], { env: env() }));
    expect(JSON.parse(accept.stdout)).toEqual({ accepted: { session_id: 's1', agent: 'bob', content_hash: envelope.content_hash, facts: 0 } });
    const landed = await ok(crux(dir, ['--agent', 'bob', 'session', 'get', 's1'], { env: env() }));
    expect(landed.stdout).toBe(state);
    expect(state).toContain('12345678901234567890');
  });

  it('--mint --json prints the same envelope; --out writes it 0600; export re-prints it byte for byte', async () => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's1', '{}'], { env: env() }));
    const out = join(tempDir(), 'pkg.json');
    const mint = await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's1', '--out', out, '--json'], { env: env() }));
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(out, 'utf8')).toBe(mint.stdout);
    const id = packageOf(JSON.parse(mint.stdout)).handoff_id as string;
    expect((await ok(crux(dir, ['handoff', 'export', id], { env: env() }))).stdout).toBe(mint.stdout);
    const hash = (JSON.parse(mint.stdout) as Envelope).content_hash;
    expect((await ok(crux(dir, ['handoff', 'export', hash.slice(0, 12)], { env: env() }))).stdout).toBe(mint.stdout);
    expect((await crux(dir, ['handoff', 'export', 'h_nope'], { env: env() })).exitCode).toBe(3);
  });

  it('follows the session machine: missing → 3, archived → 4, handed_off may be minted again', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['--agent', 'a', 'handoff', 'mint', 'nope'], { env: env() })).exitCode).toBe(3);
    await ok(crux(dir, ['--agent', 'a', 'session', 'put', 'x', '{}'], { env: env() }));
    await ok(crux(dir, ['--agent', 'a', 'session', 'archive', 'x'], { env: env() }));
    const before = snapshotDir(dir);
    const archived = await crux(dir, ['--agent', 'a', 'handoff', 'mint', 'x'], { env: env() });
    expect(archived.exitCode).toBe(4);
    expect(archived.stderr).toMatch(/archived/);
    expect(snapshotDir(dir)).toEqual(before);
    await ok(crux(dir, ['--agent', 'a', 'session', 'put', 'y', '{}'], { env: env() }));
    await ok(crux(dir, ['--agent', 'a', 'handoff', 'mint', 'y'], { env: env() }));
    await ok(crux(dir, ['--agent', 'a', 'handoff', 'mint', 'y'], { env: env() }));
  });

  it('needs a source agent (--from or --agent) and a receiver (--as or --agent): exit 2', async () => {
    const dir = freshDataDir();
    expect((await crux(dir, ['handoff', 'mint', 's'], { env: env() })).exitCode).toBe(2);
    expect((await crux(dir, ['handoff', 'accept', '-'], { env: env(), input: '{}' })).exitCode).toBe(2);
    // keygen and trust name the agent only with --agent: the hint says so once
    const keygen = await crux(dir, ['handoff', 'keygen'], { env: env() });
    expect(keygen.exitCode).toBe(2);
    expect(keygen.stderr).toMatch(/--agent is required \(name the agent with --agent or CRUX_AGENT\)/);
  });

  it('carries a task record from --task-file and flags, in struct order, empty fields left out, credentials scrubbed', async () => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{}'], { env: env() }));
    const task = writeTemp(
      'task.json',
      JSON.stringify({ blocker_rule: 'ask carol', sources: ['https://bot:pat@git.example/r'], requester: 'carol', acceptance_criteria: [] }),
    );
    const mint = await ok(
      crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--task-file', task, '--boundary', 'no prod', '--desired-outcome', 'green CI'], { env: env() }),
    );
    expect(payloadOf(JSON.parse(mint.stdout)).toString()).toContain(
      '"work_ids":[],"task_record":{"requester":"carol","desired_outcome":"green CI","sources":["https://git.example/r"],"boundaries":["no prod"],"blocker_rule":"ask carol"},"handoff_id":',
    );
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 't', '{}'], { env: env() }));
    const before = snapshotDir(dir);
    const bad = writeTemp('bad.json', '{"owner":"x"}');
    const run = await crux(dir, ['--agent', 'alice', 'handoff', 'mint', 't', '--task-file', bad], { env: env() });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/unknown field "owner"/);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('--from names the source scope; the global --agent is only the default', async () => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{"a":1}'], { env: env() }));
    const mint = await ok(crux(dir, ['--agent', 'zed', 'handoff', 'mint', 's', '--from', 'alice'], { env: env() }));
    expect(packageOf(JSON.parse(mint.stdout)).source_agent).toBe('alice');
  });
});

describe('keys and the reference BLAKE3', () => {
  it('a crux-minted package verifies with the reference BLAKE3: content hash and keyed MAC with keys/handoff.key', async () => {
    const { dir, envelope } = await mintedSetup();
    const keyPath = join(dir, 'keys', 'handoff.key');
    expect(fs.statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    const key = fs.readFileSync(keyPath);
    expect(key.length).toBe(32);
    expect(b3hash(payloadOf(envelope))).toBe(envelope.content_hash);
    expect(Buffer.from(b3keyed(key, payloadOf(envelope)), 'hex').toString('base64')).toBe(envelope.signature_b64);
  });

  it("CRUX_HANDOFF_SECRET signs with the derive-key of crux's context (BLAKE3 derive-key); no key file is made", async () => {
    const secret = 'team secret';
    const { dir, envelope } = await mintedSetup([], { CRUX_HANDOFF_SECRET: secret });
    expect(fs.existsSync(join(dir, 'keys', 'handoff.key'))).toBe(false);
    const key = Buffer.from(b3derive(CRUX_CONTEXT, enc(secret)), 'hex');
    expect(Buffer.from(b3keyed(key, payloadOf(envelope)), 'hex').toString('base64')).toBe(envelope.signature_b64);
  });

  it('CRUX_MCP_HANDOFF_SECRET signs exactly as the daemon would (key = BLAKE3 of the secret)', async () => {
    const secret = 'daemon secret';
    const { envelope } = await mintedSetup([], { CRUX_MCP_HANDOFF_SECRET: secret });
    const key = b3raw(enc(secret));
    expect(Buffer.from(b3keyed(key, payloadOf(envelope)), 'hex').toString('base64')).toBe(envelope.signature_b64);
  });

  it('the key file survives: a package minted earlier still verifies later', async () => {
    const { dir, text } = await mintedSetup();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's2', '{}'], { env: env() }));
    await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's2'], { env: env() }));
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text }));
  });

  it('refuses a key file that group or others can read (exit 5), like ssh', async () => {
    const { dir, text } = await mintedSetup();
    fs.chmodSync(join(dir, 'keys', 'handoff.key'), 0o644);
    const before = snapshotDir(dir);
    const run = await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/chmod 600/);
    expect(run.stderr).toMatch(/refuses to use it/); // refused, not "ignored": the command stops here
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('two first mints at the same moment agree on one key', async () => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'a', 'session', 'put', 'x', '{}'], { env: env() }));
    await ok(crux(dir, ['--agent', 'a', 'session', 'put', 'y', '{}'], { env: env() }));
    const [mx, my] = await Promise.all([
      ok(spawned(dir, ['--agent', 'a', 'handoff', 'mint', 'x'], { env: env() })),
      ok(spawned(dir, ['--agent', 'a', 'handoff', 'mint', 'y'], { env: env() })),
    ]);
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'b'], { env: env(), input: mx.stdout }));
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'b'], { env: env(), input: my.stdout }));
  });
});

describe('daemon compatibility', () => {
  const secret = 'shared between crux and the daemon';
  const daemonPayload =
    '{"session_id":"task-7","session_state":{"plan":["w_3","execplan:deploy"],"note":"f_a1","n":1.0},"facts":[' +
    '{"fact_id":"f_a1","entity":"svc","value":"uses postgres 16","tenant_hash":"t_42","horizon_class":"long","actor":"planner-bot","private":false,"stored_at":"2026-11-29T20:00:00.5Z"},' +
    '{"fact_id":"f_a2","entity":"__work__::w_9","tenant_hash":"t_42","horizon_class":"short","actor":null,"private":false,"stored_at":"2026-11-29T20:00:01Z"}' +
    '],"created_at":"2026-11-29T20:30:00.123456789+00:00","source_agent":"planner","target_agent":"builder","message":null,"work_ids":["execplan:deploy","w_3","w_9"]}';

  it('accepts a hand-built daemon package; facts are kept verbatim (tenant, horizon, actor)', async () => {
    const dir = freshDataDir();
    const pkg = daemonPackage(daemonPayload, secret);
    const run = await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'builder', '--json'], { env: env({ CRUX_MCP_HANDOFF_SECRET: secret }), input: pkg }));
    expect(JSON.parse(run.stdout).accepted).toMatchObject({ session_id: 'task-7', agent: 'builder', facts: 2 });
    const state = await ok(crux(dir, ['--agent', 'builder', 'session', 'get', 'task-7'], { env: env() }));
    expect(state.stdout).toBe('{"plan":["w_3","execplan:deploy"],"note":"f_a1","n":1.0}');
    const facts = fs.readFileSync(join(dir, 'facts.jsonl'), 'utf8');
    expect(facts).toContain(
      JSON.stringify(
        '{"fact_id":"f_a1","entity":"svc","value":"uses postgres 16","tenant_hash":"t_42","horizon_class":"long","actor":"planner-bot","private":false,"stored_at":"2026-11-29T20:00:00.5Z"}',
      ),
    );
    const list = JSON.parse((await ok(crux(dir, ['handoff', 'list', '--json'], { env: env() }))).stdout);
    expect(list.handoffs).toMatchObject([{ direction: 'accepted', status: 'accepted', session_id: 'task-7', accepted_by: 'builder', handoff_id: null }]);
  });

  it('re-bundles accepted facts with --include-facts: verbatim, sorted, never private ones', async () => {
    const dir = freshDataDir();
    const payload = daemonPayload.replace(
      '],"created_at"',
      ',{"fact_id":"f_secret","entity":"task-7","private":true,"stored_at":"2026-11-29T20:00:02Z"},{"fact_id":"f_about","entity":"task-7","tenant_hash":"t_1","stored_at":"2026-11-29T19:00:00Z"}],"created_at"',
    );
    await ok(
      crux(dir, ['handoff', 'accept', '-', '--as', 'builder'], { env: env({ CRUX_MCP_HANDOFF_SECRET: secret }), input: daemonPackage(payload, secret) }),
    );
    const mint = await ok(crux(dir, ['--agent', 'builder', 'handoff', 'mint', 'task-7', '--include-facts'], { env: env() }));
    const text = payloadOf(JSON.parse(mint.stdout)).toString();
    // f_about (entity = session id, 19:00) before f_a1 (referenced by the state, 20:00:00.5); f_a2 is not related; f_secret is private
    expect(text).toContain(
      '"facts":[{"fact_id":"f_about","entity":"task-7","tenant_hash":"t_1","stored_at":"2026-11-29T19:00:00Z"},{"fact_id":"f_a1","entity":"svc","value":"uses postgres 16","tenant_hash":"t_42","horizon_class":"long","actor":"planner-bot","private":false,"stored_at":"2026-11-29T20:00:00.5Z"}],',
    );
    expect(text).not.toContain('f_secret');
    expect(packageOf(JSON.parse(mint.stdout)).work_ids).toEqual(['execplan:deploy', 'w_3']);
    // without --include-facts, no facts travel
    await ok(crux(dir, ['--agent', 'builder', 'session', 'put', 'task-7', '{"note":"f_a1"}'], { env: env() }));
    const bare = await ok(crux(dir, ['--agent', 'builder', 'handoff', 'mint', 'task-7'], { env: env() }));
    expect(packageOf(JSON.parse(bare.stdout)).facts).toEqual([]);
  });

  it('expiry of a daemon package: created_at + --max-age (default 24h), both ways', async () => {
    const pkg = daemonPackage(daemonPayload, secret);
    const e = { CRUX_MCP_HANDOFF_SECRET: secret };
    const late = { ...e, CRUX_NOW: '2026-11-30T20:30:00.200Z' }; // 24h + 77 ms after created_at
    const dir = freshDataDir();
    const expired = await crux(dir, ['handoff', 'accept', '-', '--as', 'builder'], { env: late, input: pkg });
    expect(expired.exitCode).toBe(7);
    expect(fs.existsSync(dir)).toBe(false);
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'builder', '--max-age', '25h'], { env: late, input: pkg }));
    await ok(crux(freshDataDir(), ['handoff', 'accept', '-', '--as', 'builder'], { env: { ...e, CRUX_NOW: '2026-11-30T20:30:00.100Z' }, input: pkg }));
  });
});

describe('every tamper is refused with its code, and nothing changes', () => {
  const tamper = async (mutate: (e: Envelope) => Envelope, as = 'bob') => {
    const { dir, envelope } = await mintedSetup();
    const before = snapshotDir(dir);
    const run = await crux(dir, ['handoff', 'accept', '-', '--as', as], { env: env(), input: JSON.stringify(mutate(envelope)) });
    expect(snapshotDir(dir)).toEqual(before);
    return run;
  };
  const flipPayload = (e: Envelope) => {
    const p = payloadOf(e);
    p[p.indexOf('"step":3') + 7] = '4'.charCodeAt(0);
    return p;
  };

  it('payload changed → 6 (hash)', async () => {
    const run = await tamper((e) => ({ ...e, payload_b64: flipPayload(e).toString('base64') }));
    expect(run.exitCode).toBe(6);
    expect(run.stderr).toMatch(/content hash mismatch/);
  });

  it('payload changed with its hash recomputed → 6 (MAC)', async () => {
    const run = await tamper((e) => {
      const p = flipPayload(e);
      return { ...e, payload_b64: p.toString('base64'), content_hash: b3hash(p) };
    });
    expect(run.exitCode).toBe(6);
    expect(run.stderr).toMatch(/MAC mismatch/);
  });

  it('hash changed → 6', async () => {
    expect((await tamper((e) => ({ ...e, content_hash: '0'.repeat(64) }))).exitCode).toBe(6);
  });

  it('MAC changed → 6', async () => {
    const run = await tamper((e) => {
      const mac = Buffer.from(e.signature_b64, 'base64');
      mac[5] = mac[5]! ^ 0x80;
      return { ...e, signature_b64: mac.toString('base64') };
    });
    expect(run.exitCode).toBe(6);
  });

  it('algorithm changed → 6', async () => {
    const run = await tamper((e) => ({ ...e, signature_alg: 'none' }));
    expect(run.exitCode).toBe(6);
    expect(run.stderr).toMatch(/unsupported signature algorithm/);
  });

  it('wrong receiver → 6', async () => {
    const run = await tamper((e) => e, 'mallory');
    expect(run.exitCode).toBe(6);
    expect(run.stderr).toMatch(/addressed to "bob"/);
  });

  it('another key (another data dir) → 6', async () => {
    const { text } = await mintedSetup();
    const other = await mintedSetup();
    const run = await crux(other.dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text });
    expect(run.exitCode).toBe(6);
  });

  it('inspect reports the failed check, changes nothing, exits with its code', async () => {
    const { dir, envelope } = await mintedSetup();
    const before = snapshotDir(dir);
    const run = await crux(dir, ['handoff', 'inspect', '-', '--json'], { env: env(), input: JSON.stringify({ ...envelope, content_hash: '0'.repeat(64) }) });
    expect(run.exitCode).toBe(6);
    const out = JSON.parse(run.stdout);
    expect(out.checks).toEqual({
      algorithm: 'ok',
      content_hash: 'failed',
      signature: 'ok',
      payload: 'ok',
      target: 'skipped',
      expiry: 'ok',
      replay: 'ok',
      daemon_compatible: 'ok',
    });
    expect(out.package.session_id).toBe('s1');
    expect(snapshotDir(dir)).toEqual(before);
  });
});

describeEachStore('on a %s store', (kind) => {
  describe('expiry and replay', () => {
    it('a crux package is valid until expires_at (--ttl) and expired after (7)', async () => {
      const { dir, text } = await mintedSetup(['--ttl', '2h'], {}, freshStore(kind));
      expect((await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: { CRUX_NOW: '2026-11-29T23:00:00.001Z' }, input: text })).exitCode).toBe(7);
      // --max-age does not extend a package that names its own expiry
      expect(
        (await crux(dir, ['handoff', 'accept', '-', '--as', 'bob', '--max-age', '7d'], { env: { CRUX_NOW: '2026-11-29T23:00:00.001Z' }, input: text }))
          .exitCode,
      ).toBe(7);
      const list = JSON.parse((await ok(crux(dir, ['handoff', 'list', '--json'], { env: { CRUX_NOW: '2026-11-30T00:00:00Z' } }))).stdout);
      expect(list.handoffs[0].status).toBe('expired');
      await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: { CRUX_NOW: '2026-11-29T23:00:00Z' }, input: text }));
    });

    it('a second accept is refused with 8; list shows outstanding, then accepted', async () => {
      const { dir, text } = await mintedSetup([], {}, freshStore(kind));
      const before = JSON.parse((await ok(crux(dir, ['handoff', 'list', '--json'], { env: env() }))).stdout);
      expect(before.handoffs).toMatchObject([{ direction: 'minted', status: 'outstanding', source_agent: 'alice', target_agent: 'bob' }]);
      await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text }));
      const snap = snapshotDir(dir);
      const again = await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text });
      expect(again.exitCode).toBe(8);
      expect(snapshotDir(dir)).toEqual(snap);
      const inspect = await crux(dir, ['handoff', 'inspect', '-', '--as', 'bob', '--json'], { env: env(), input: text });
      expect(inspect.exitCode).toBe(8);
      expect(JSON.parse(inspect.stdout).checks.replay).toBe('failed');
      const after = JSON.parse((await ok(crux(dir, ['handoff', 'list', '--json'], { env: env() }))).stdout);
      expect(after.handoffs).toMatchObject([{ status: 'accepted', accepted_by: 'bob' }]);
    });

    it('eight simultaneous accepts of one package: exactly one succeeds, seven exit 8', async () => {
      for (let round = 0; round < (kind === 'pg' ? 2 : 3); round += 1) {
        const { dir, text } = await mintedSetup([], {}, freshStore(kind));
        const runs = await Promise.all(Array.from({ length: 8 }, () => spawned(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text })));
        const codes = runs.map((r) => r.exitCode).sort();
        expect(codes, runs.map((r) => r.stderr).join('')).toEqual([0, 8, 8, 8, 8, 8, 8, 8]);
        const ledger = journalLines(dir, 'handoffs.jsonl').join('\n');
        expect(ledger.match(/"handoff\.accepted"/g)).toHaveLength(1);
        const sessions = journalLines(dir, 'sessions.jsonl').join('\n');
        expect(sessions.match(/"session\.received"/g)).toHaveLength(1);
      }
    });
  });
});

describe('Ed25519', () => {
  it('round trip in one data directory: keygen trusts the key here', async () => {
    const dir = freshDataDir();
    const gen = await ok(crux(dir, ['--agent', 'alice', 'handoff', 'keygen', '--json'], { env: env() }));
    const key = JSON.parse(gen.stdout);
    expect(key).toMatchObject({ agent: 'alice', created: true });
    const keyFile = fs.readdirSync(join(dir, 'keys')).find((f) => f.includes('alice'))!;
    expect(fs.statSync(join(dir, 'keys', keyFile)).mode & 0o777).toBe(0o600);
    // a second keygen shows the same key
    expect(JSON.parse((await ok(crux(dir, ['--agent', 'alice', 'handoff', 'keygen', '--json'], { env: env() }))).stdout)).toMatchObject({
      public_key: key.public_key,
      created: false,
    });
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{"x":1}'], { env: env() }));
    const mint = await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--alg', 'ed25519'], { env: env() }));
    const envelope = JSON.parse(mint.stdout) as Envelope;
    expect(envelope.signature_alg).toBe('ed25519');
    expect(packageOf(envelope).key_id).toBe(key.key_id);
    expect(fs.existsSync(join(dir, 'keys', 'handoff.key'))).toBe(false);
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: mint.stdout }));
  });

  it('another data directory: untrusted agent → 6, wrong key → 6, trusted → 0', async () => {
    const minter = freshDataDir();
    const receiver = freshDataDir();
    const key = JSON.parse((await ok(crux(minter, ['--agent', 'alice', 'handoff', 'keygen', '--json'], { env: env() }))).stdout);
    const impostor = JSON.parse((await ok(crux(freshDataDir(), ['--agent', 'alice', 'handoff', 'keygen', '--json'], { env: env() }))).stdout);
    await ok(crux(minter, ['--agent', 'alice', 'session', 'put', 's', '{"x":1}'], { env: env() }));
    const pkg = (await ok(crux(minter, ['--agent', 'alice', 'handoff', 'mint', 's', '--alg', 'ed25519'], { env: env() }))).stdout;

    const untrusted = await crux(receiver, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: pkg });
    expect(untrusted.exitCode).toBe(6);
    expect(untrusted.stderr).toMatch(/no trusted Ed25519 key for agent "alice"/);
    expect(fs.existsSync(receiver)).toBe(false);

    await ok(crux(receiver, ['--agent', 'alice', 'handoff', 'trust', impostor.public_key], { env: env() }));
    expect((await crux(receiver, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: pkg })).exitCode).toBe(6);
    // a key trusted for another agent does not vouch for alice
    await ok(crux(receiver, ['--agent', 'carol', 'handoff', 'trust', key.public_key], { env: env() }));
    expect((await crux(receiver, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: pkg })).exitCode).toBe(6);

    await ok(crux(receiver, ['--agent', 'alice', 'handoff', 'trust', key.public_key], { env: env() }));
    await ok(crux(receiver, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: pkg }));
    // a signature over a changed payload (hash recomputed) fails
    const e = JSON.parse(pkg) as Envelope;
    const p = Buffer.from(payloadOf(e).toString().replace('"x":1', '"x":2'));
    const forged = JSON.stringify({ ...e, payload_b64: p.toString('base64'), content_hash: b3hash(p) });
    expect((await crux(receiver, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: forged })).exitCode).toBe(6);
  });

  it('mint --alg ed25519 without a key → 3; a bad public key → 5', async () => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{}'], { env: env() }));
    expect((await crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--alg', 'ed25519'], { env: env() })).exitCode).toBe(3);
    expect((await crux(dir, ['--agent', 'alice', 'handoff', 'trust', 'ed25519:short'], { env: env() })).exitCode).toBe(5);
    expect((await crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--alg', 'rsa'], { env: env() })).exitCode).toBe(2);
  });
});

describe('bad input: a clear message, its exit code, an unchanged data directory', () => {
  it.each([
    ['not JSON', 'this is not a package', 5, /not JSON/],
    ['not an object', '[1,2]', 5, /not a JSON object/],
    ['missing fields', '{"payload_b64":"e30="}', 5, /has no content_hash, signature_b64, signature_alg/],
    ['not base64', '{"payload_b64":"%%%","content_hash":"x","signature_b64":"x","signature_alg":"blake3-mac-v1"}', 5, /not standard base64/],
  ])('%s', async (_name, input, code, message) => {
    const { dir } = await mintedSetup();
    const before = snapshotDir(dir);
    for (const command of ['accept', 'inspect']) {
      const run = await crux(dir, ['handoff', command, '-', '--as', 'bob'], { env: env(), input });
      expect(run.exitCode, command).toBe(code);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('a package with a valid envelope whose authenticated payload lacks fields → 5', async () => {
    const secret = 's';
    const pkg = daemonPackage('{"session_id":"x","facts":[],"source_agent":"a"}', secret);
    const run = await crux(freshDataDir(), ['handoff', 'accept', '-', '--as', 'b'], { env: env({ CRUX_MCP_HANDOFF_SECRET: secret }), input: pkg });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/has no created_at/);
  });

  it('oversized input (over 8 MiB) → 5 before decoding', async () => {
    const { dir } = await mintedSetup();
    const before = snapshotDir(dir);
    const big = writeTemp('big.json', Buffer.alloc(8 * 1024 * 1024 + 1, 0x20));
    const run = await crux(dir, ['handoff', 'accept', big, '--as', 'bob'], { env: env() });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/over the limit/);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('a large package under 8 MiB is accepted and inspected (no stack overflow, no exit 1)', async () => {
    const secret = 's';
    // 5.4 MB of state with 1.8 M escapes: 7.2 MB of envelope, accepted when the receiver allows such a state
    const state = `{"log":"${'a\\n'.repeat(1_800_000)}"}`;
    const payload = `{"session_id":"big","session_state":${state},"facts":[],"created_at":"2026-11-29T20:00:00Z","source_agent":"a","target_agent":null,"message":null,"work_ids":[]}`;
    const file = writeTemp('big-pkg.json', daemonPackage(payload, secret));
    const dir = freshDataDir();
    const big = env({ CRUX_MCP_HANDOFF_SECRET: secret, CRUX_MAX_STATE_BYTES: String(8 * 1024 * 1024) });
    await ok(crux(dir, ['--json', 'handoff', 'inspect', file, '--as', 'b'], { env: big }));
    await ok(crux(dir, ['handoff', 'accept', file, '--as', 'b'], { env: big }));
    expect((await ok(crux(dir, ['--agent', 'b', 'session', 'get', 'big'], { env: big }))).stdout).toBe(state);
  });

  it('mint refuses (5) a package over the 8 MiB that accept reads, before writing anything or making a key', async () => {
    const dir = freshDataDir();
    const big = env({ CRUX_MAX_STATE_BYTES: String(16 * 1024 * 1024) });
    await ok(crux(dir, ['--agent', 'a', 'session', 'put', 's', '--file', writeTemp('state.json', `{"blob":"${'x'.repeat(7_000_000)}"}`)], { env: big }));
    const before = snapshotDir(dir);
    const run = await crux(dir, ['--agent', 'a', 'handoff', 'mint', 's'], { env: big });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/over the limit of 8388608 \(8 MiB\)/);
    expect(run.stdout).toBe('');
    expect(snapshotDir(dir)).toEqual(before);
    expect(fs.existsSync(join(dir, 'keys', 'handoff.key'))).toBe(false);
  });

  it('a missing file → 5', async () => {
    const { dir } = await mintedSetup();
    const before = snapshotDir(dir);
    const run = await crux(dir, ['handoff', 'accept', '/nonexistent/pkg.json', '--as', 'bob'], { env: env() });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/no such file/);
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('accept into a receiver session that is closed → 4, nothing written', async () => {
    const { dir, text } = await mintedSetup();
    await ok(crux(dir, ['--agent', 'bob', 'session', 'put', 's1', '{}'], { env: env() }));
    await ok(crux(dir, ['--agent', 'bob', 'session', 'close', 's1'], { env: env() }));
    const before = snapshotDir(dir);
    expect((await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env: env(), input: text })).exitCode).toBe(4);
    expect(snapshotDir(dir)).toEqual(before);
  });
});
