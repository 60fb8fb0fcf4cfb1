// `crux handoff untrust`: a revoked Ed25519 key's packages are refused (6); list and doctor show the keyring.
import { describe, expect, it } from 'vitest';
import { freshDataDir, snapshotDir, type Run } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const env = { CRUX_NOW: '2026-11-29T21:00:00Z' };

async function ok(run: Promise<Run>): Promise<Run> {
  const r = await run;
  expect(r.exitCode, `stderr: ${r.stderr}`).toBe(0);
  return r;
}
const json = async (dir: string, args: string[]) => JSON.parse((await ok(crux(dir, ['--json', ...args], { env }))).stdout);

/** A minter with two keys of alice (one per data dir of origin), a receiver trusting both, and a package by each. */
async function setup() {
  const minter = freshDataDir();
  const other = freshDataDir();
  const receiver = freshDataDir();
  const k1 = await json(minter, ['--agent', 'alice', 'handoff', 'keygen']);
  const k2 = await json(other, ['--agent', 'alice', 'handoff', 'keygen']);
  const packages: string[] = [];
  for (const dir of [minter, other]) {
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', '{"x":1}'], { env }));
    packages.push((await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--alg', 'ed25519'], { env }))).stdout);
  }
  for (const k of [k1, k2]) await ok(crux(receiver, ['--agent', 'alice', 'handoff', 'trust', k.public_key], { env }));
  return { minter, receiver, k1, k2, p1: packages[0]!, p2: packages[1]! };
}

const accept = (dir: string, pkg: string, as = 'bob') => crux(dir, ['handoff', 'accept', '-', '--as', as], { env, input: pkg });

describe('crux handoff untrust', () => {
  it('revokes one key by fingerprint: its packages are refused with 6, the other key still verifies', async () => {
    const { receiver, k1, p1, p2 } = await setup();
    const out = await json(receiver, ['--agent', 'alice', 'handoff', 'untrust', k1.key_id]);
    expect(out.untrusted.revoked).toEqual([{ key_id: k1.key_id, public_key: k1.public_key }]);
    expect(out.untrusted.trusted).toHaveLength(1);
    const before = snapshotDir(receiver);
    const refused = await accept(receiver, p1);
    expect(refused.exitCode).toBe(6);
    expect(refused.stderr).toMatch(new RegExp(`signed with key ${k1.key_id}, which was revoked here`));
    expect(snapshotDir(receiver)).toEqual(before);
    const inspect = await crux(receiver, ['--json', 'handoff', 'inspect', '-', '--as', 'bob'], { env, input: p1 });
    expect(inspect.exitCode).toBe(6);
    expect(JSON.parse(inspect.stdout).checks.signature).toBe('failed');
    await ok(accept(receiver, p2));
  });

  it('revokes every key of the agent without a fingerprint; by public key too; survives compaction', async () => {
    const { receiver, k2, p1, p2 } = await setup();
    const out = await json(receiver, ['--agent', 'alice', 'handoff', 'untrust']);
    expect(out.untrusted.revoked).toHaveLength(2);
    expect(out.untrusted.trusted).toEqual([]);
    await ok(crux(receiver, ['journal', 'compact'], { env }));
    for (const p of [p1, p2]) expect((await accept(receiver, p)).exitCode).toBe(6);
    // Revoking again changes nothing (exit 0, nothing written); by public key is the same key.
    const before = snapshotDir(receiver);
    expect((await json(receiver, ['--agent', 'alice', 'handoff', 'untrust', k2.public_key])).untrusted.revoked).toEqual([]);
    expect(snapshotDir(receiver)).toEqual(before);
    // An explicit trust takes a key back.
    await ok(crux(receiver, ['--agent', 'alice', 'handoff', 'trust', k2.public_key], { env }));
    await ok(accept(receiver, p2));
    expect((await accept(receiver, p1)).exitCode).toBe(6);
  });

  it('an agent or fingerprint it does not know is 3; a malformed key 5; no agent 2 — nothing written', async () => {
    const { receiver } = await setup();
    const before = snapshotDir(receiver);
    for (const [args, code] of [
      [['--agent', 'carol', 'handoff', 'untrust'], 3],
      [['--agent', 'alice', 'handoff', 'untrust', '0123456789abcdef'], 3],
      [['--agent', 'alice', 'handoff', 'untrust', 'ed25519:nope'], 5],
      [['handoff', 'untrust'], 2],
    ] as const) {
      const run = await crux(receiver, [...args], { env });
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(code);
      expect(run.stderr).toMatch(/^crux: .+\n$/);
    }
    expect(snapshotDir(receiver)).toEqual(before);
  });

  it('a revoked own key is not trusted again by keygen', async () => {
    const { minter, p1 } = await setup();
    await ok(crux(minter, ['--agent', 'alice', 'handoff', 'untrust'], { env }));
    const again = await json(minter, ['--agent', 'alice', 'handoff', 'keygen']);
    expect(again).toMatchObject({ created: false, trusted: false });
    expect((await accept(minter, p1)).exitCode).toBe(6);
  });
});

describe('the keyring in handoff list and doctor', () => {
  it('shows trusted and revoked keys with their fingerprints, in --json too', async () => {
    const { receiver, k1, k2 } = await setup();
    await ok(crux(receiver, ['--agent', 'alice', 'handoff', 'untrust', k1.key_id], { env }));
    const list = await json(receiver, ['handoff', 'list']);
    expect(list.handoffs).toEqual([]);
    expect(list.keys).toEqual([
      { agent: 'alice', fingerprint: k2.key_id, public_key: k2.public_key, status: 'trusted', revoked_at: null },
      { agent: 'alice', fingerprint: k1.key_id, public_key: k1.public_key, status: 'revoked', revoked_at: '2026-11-29T21:00:00.000Z' },
    ]);
    const human = (await ok(crux(receiver, ['handoff', 'list'], { env }))).stdout;
    expect(human).toMatch(new RegExp(`alice[\\t]${k2.key_id}[\\t]trusted`));
    expect(human).toMatch(new RegExp(`alice[\\t]${k1.key_id}[\\t]revoked`));
    const doctor = await json(receiver, ['doctor']);
    expect(doctor.keyring).toEqual(list.keys);
    const doctorText = (await ok(crux(receiver, ['doctor'], { env }))).stdout;
    expect(doctorText).toContain(`trusted key alice: Ed25519 ${k2.key_id}`);
    expect(doctorText).toContain(`revoked key alice: Ed25519 ${k1.key_id}`);
  });
});
