// `crux journal redact [--states] [--dry-run]` (SPEC §7) through the built CLI, on a store that already keeps
// secrets (one an older crux wrote: free text in cases and sessions, in history/ and the journal, a session state,
// a quarantined torn tail): afterwards no byte the store keeps holds one, the chain verifies, every other record is
// as it was, a redacted state is still JSON; --dry-run writes nothing; a running `crux mcp` answers from the
// redacted store at once; nothing printed holds a secret. On PostgreSQL the same, checked with pg_dump.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../src/journal/dir/data-dir';
import { ALL_STORES } from '../../src/domain/stores';
import { ENGINES, freshDataDir, journalRecords } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { freshStoreUrl, pgServerUrl } from '../helpers/pg';
import { startMcp } from '../helpers/mcp';

const NOW = '2026-12-01T10:00:00.000Z';
const GH = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
const AWS_ID = 'AKIAQ3EGRHNW4YT5XZPL';
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSIsImlhdCI6MTczMzUwMDAwMH0.Qm9vb1N0cmluZ1NpZ25hdHVyZUhlcmUxMjM0NTY3';
const STATE_SECRET = 'ghp_Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6';
const SECRETS = [GH, AWS_ID, JWT, STATE_SECRET];
/** What a crux before redaction kept: the placeholders the CLI wrote, replaced in the stored records. */
const PLANTED: Record<string, string> = {
  PLANT_TASK: `deploy with GITHUB_TOKEN=${GH}`,
  PLANT_ACTION: `curl -H "Authorization: Bearer ${JWT}"`,
  PLANT_SUMMARY: `used key ${AWS_ID}`,
  PLANT_STATE: `token ${STATE_SECRET}`,
};

/** Every byte of every file under `dir` (the lock's apart), as one string. */
function allBytes(dir: string): string {
  let out = '';
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && !join(e.parentPath, e.name).includes('/.lock')) out += fs.readFileSync(join(e.parentPath, e.name), 'latin1');
  }
  return out;
}

/** Every file (the lock's apart) and its bytes. */
function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(e.parentPath, e.name);
    if (e.isFile() && !path.includes('/.lock')) out.set(path, fs.readFileSync(path, 'latin1'));
  }
  return out;
}

const held = (text: string) => SECRETS.filter((s) => text.includes(s));

/** A data directory as an older crux left it: secrets in free text (history and journal), a state, quarantine. */
async function plantedStore(): Promise<string> {
  const dir = freshDataDir();
  const ok = async (args: string[]) => {
    const r = await crux(dir, ['--now', NOW, ...args]);
    expect(r.exitCode, r.stderr).toBe(0);
    return r;
  };
  await ok(['case', 'record', '--task', 'PLANT_TASK', '--action', 'PLANT_ACTION', '--outcome', 'success', '--tag', 'deploy']);
  await ok(['case', 'record', '--task', 'an ordinary case', '--action', 'nothing secret', '--outcome', 'success']);
  await ok(['session', 'put', 's1', JSON.stringify({ note: 'PLANT_STATE', n: 1 })]);
  await ok(['session', 'put', 's2', JSON.stringify({ note: 'plain' })]);
  await ok(['session', 'close', 's2', '--summary', 'PLANT_SUMMARY']);
  await ok(['session', 'put', 's1', JSON.stringify({ note: 'PLANT_STATE', n: 2 })]);
  await ok(['journal', 'compact']);
  await ok(['case', 'record', '--task', 'PLANT_TASK again', '--action', 'x', '--outcome', 'success']);
  // A torn tail holding a secret, quarantined by the next write.
  fs.appendFileSync(join(dir, 'sessions.jsonl'), `{"v":1,"seq":99,"data":{"summary":"GITHUB_TOKEN=${GH}`);
  await ok(['session', 'put', 's3', '{}']);
  // The placeholders become secrets in every piece, re-chained (what an older crux would have written).
  const store = new DataDir(dir, { warn: () => {} }, 5_000);
  const plant = (v: unknown): unknown =>
    typeof v === 'string'
      ? Object.entries(PLANTED).reduce((t, [k, s]) => t.replaceAll(k, s), v)
      : Array.isArray(v)
        ? v.map(plant)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plant(x)]))
          : v;
  await store.rewrite(ALL_STORES, NOW, (r) => (JSON.stringify(r.data).includes('PLANT_') ? { ...r, data: plant(r.data) } : undefined), {
    note: 'planted',
    doing: 'planting',
  });
  expect(held(allBytes(dir)).sort()).toEqual([...SECRETS].sort());
  return dir;
}

describe('journal redact', () => {
  it('--dry-run reports what it would redact and changes no file', async () => {
    const dir = await plantedStore();
    const before = files(dir);
    const dry = await crux(dir, ['--json', 'journal', 'redact', '--dry-run', '--states']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    const doc = JSON.parse(dry.stdout);
    expect(doc).toMatchObject({ dry_run: true, states: true, quarantine: { redacted: 1 } });
    expect(doc.redacted).toEqual(
      expect.arrayContaining([
        { journal: 'cases.jsonl', kind: 'github-token', records: expect.any(Number) },
        { journal: 'cases.jsonl', kind: 'jwt', records: expect.any(Number) },
        { journal: 'sessions.jsonl', kind: 'aws-access-key-id', records: expect.any(Number) },
      ]),
    );
    expect(held(dry.stdout + dry.stderr)).toEqual([]);
    expect(files(dir)).toEqual(before);
  });

  it('removes every secret from every byte the store keeps; the chain verifies; the rest is as it was', async () => {
    const dir = await plantedStore();
    const checked = JSON.parse((await crux(dir, ['--json', 'journal', 'check'])).stdout);
    expect(checked.secrets.length).toBeGreaterThan(0);
    const beforeCases = journalRecords(dir, 'cases.jsonl');
    const mcp = await startMcp(dir);
    try {
      const listed = JSON.stringify(await mcp.call('case_list', {}));
      expect(listed).toContain(GH);
      // Free text only: the state keeps its secret until --states.
      const run = await crux(dir, ['journal', 'redact']);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/cases\.jsonl: \d+ record\(s\) with a secret \(github-token\) redacted/);
      expect(run.stdout).toContain('beyond it');
      expect(held(run.stdout + run.stderr)).toEqual([]);
      expect(held(allBytes(dir))).toEqual([STATE_SECRET]);
      // The running server answers from the redacted store at once.
      const after = JSON.stringify(await mcp.call('case_list', {}));
      expect(held(after)).toEqual([]);
      expect(after).toContain('[redacted:github-token]');
    } finally {
      await mcp.close();
    }
    const states = await crux(dir, ['--json', 'journal', 'redact', '--states']);
    expect(states.exitCode, states.stderr).toBe(0);
    expect(JSON.parse(states.stdout).redacted).toEqual([{ journal: 'sessions.jsonl', kind: 'github-token', records: expect.any(Number) }]);
    expect(held(allBytes(dir))).toEqual([]);
    // The redacted state is still JSON, every other byte of it kept.
    const got = await crux(dir, ['session', 'get', 's1']);
    expect(JSON.parse(got.stdout)).toEqual({ note: 'token [redacted:github-token]', n: 2 });
    const again = JSON.parse((await crux(dir, ['--json', 'journal', 'check'])).stdout);
    expect(again).toMatchObject({ healthy: true, secrets: [] });
    for (const j of again.journals) expect(j.history?.problems ?? []).toEqual([]);
    // Every record but those redacted is as it was (its place in the chain apart).
    const strip = ({ p, h, ...r }: Record<string, unknown>) => r;
    const afterCases = journalRecords(dir, 'cases.jsonl');
    expect(afterCases).toHaveLength(beforeCases.length);
    afterCases.forEach((r, i) => {
      if (!JSON.stringify(beforeCases[i]).includes(GH) && !JSON.stringify(beforeCases[i]).includes(JWT)) expect(strip(r)).toEqual(strip(beforeCases[i]));
    });
    // A second run finds nothing.
    const none = JSON.parse((await crux(dir, ['--json', 'journal', 'redact', '--states'])).stdout);
    expect(none).toMatchObject({ redacted: [], quarantine: { redacted: 0 } });
  });

  it.each([
    ['rewrite-set:staged', 'old'],
    ['rewrite-set:moved#2', 'new'],
  ])('killed at %s, it leaves the %s store, and the next command that takes the lock says so', async (point, expected) => {
    const dir = await plantedStore();
    const before = files(dir);
    const killed = await crux(dir, ['journal', 'redact', '--states'], { env: { CRUX_TEST_CRASH_AT: point } });
    expect(killed.exitCode, killed.stderr).not.toBe(0);
    if (expected === 'old') for (const [path, bytes] of before) expect(files(dir).get(path), path).toBe(bytes);
    const checked = JSON.parse((await crux(dir, ['--json', 'journal', 'check'])).stdout);
    expect(checked.healthy).toBe(true);
    if (expected === 'old') {
      expect(checked.secrets.length).toBeGreaterThan(0);
      const kept = (m: Map<string, string>) => new Map([...m].filter(([p]) => !p.includes('/cache/')));
      expect(kept(files(dir))).toEqual(kept(before));
      expect(held(allBytes(dir)).sort()).toEqual([...SECRETS].sort());
    } else {
      expect(checked.secrets).toEqual([]);
      expect(held(allBytes(dir))).toEqual([]);
    }
    expect([...files(dir).keys()].filter((p) => /staged|rewrite-plan|rewrite-staging/.test(p))).toEqual([]);
  });

  it.runIf(ENGINES.includes('pg'))('on PostgreSQL: no row, history row, derived row or quarantine row holds a secret (pg_dump)', async () => {
    const dir = await plantedStore();
    const url = freshStoreUrl('redact');
    const copied = await crux(dir, ['journal', 'copy', '--to', url]);
    expect(copied.exitCode, copied.stderr).toBe(0);
    // Reads build the derived rows (snapshot, index, terms) from the planted text.
    await crux(url, ['case', 'retrieve', 'deploy']);
    await crux(url, ['session', 'list', '--all']);
    const schema = new URL(url).searchParams.get('schema')!;
    const dump = () => {
      const u = new URL(pgServerUrl());
      u.searchParams.delete('schema');
      return execFileSync('pg_dump', ['--data-only', '--schema', schema, u.href], { encoding: 'latin1', maxBuffer: 1 << 28 });
    };
    expect(held(dump()).length).toBeGreaterThan(0);
    const run = await crux(url, ['--json', 'journal', 'redact', '--states']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(held(run.stdout + run.stderr)).toEqual([]);
    expect(held(dump())).toEqual([]);
    const checked = JSON.parse((await crux(url, ['--json', 'journal', 'check'])).stdout);
    expect(checked).toMatchObject({ healthy: true, secrets: [] });
    const found = JSON.parse((await crux(url, ['--json', 'case', 'retrieve', 'deploy'])).stdout);
    expect(JSON.stringify(found)).toContain('[redacted:github-token]');
  });
});
