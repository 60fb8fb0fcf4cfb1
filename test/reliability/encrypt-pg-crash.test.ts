// `journal encrypt` and `journal rekey` on PostgreSQL (SPEC §13, §11) are one transaction: bin/crux killed when every
// row is rewritten and the key id recorded but COMMIT not yet sent leaves every table of the schema as it was (the
// server rolls back), the old key still reads and the store records no new key id; run again, the store is whole.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, freshStore, snapshotDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { pgAvailable, pgSkipReason, psql } from '../helpers/pg';

const SECRETS = ['plainsecret-one', 'plainsecret-two', 'plainsecret-sum'];

async function newKey(): Promise<{ file: string; id: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim() };
}

/** A store with a history generation (a compaction) and a journal, each holding plaintext (or sealed with the key). */
async function seed(url: string, keyArgs: string[] = []): Promise<void> {
  const ok = async (args: string[]) => {
    const r = await crux(url, [...keyArgs, ...args]);
    expect(r.exitCode, r.stderr).toBe(0);
  };
  await ok(['session', 'put', 's', `{"v":"${SECRETS[0]}"}`]);
  await ok(['session', 'put', 's', `{"v":"${SECRETS[1]}"}`]);
  await ok(['journal', 'compact']);
  await ok(['session', 'close', 's', '--summary', SECRETS[2]!]);
}

function dump(url: string): string {
  const u = new URL(url);
  const schema = u.searchParams.get('schema')!;
  u.searchParams.delete('schema');
  return execFileSync('pg_dump', ['--no-owner', '--schema', schema, u.href], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

const keyRow = (url: string) => {
  const schema = new URL(url).searchParams.get('schema')!;
  return psql(`select convert_from(bytes, 'utf8') from "${schema}".keys where name = 'store-key.json'`, url).trim();
};

const pgIt = it.skipIf(!pgAvailable());
const skipped = pgSkipReason() === undefined ? '' : ` (skipped: ${pgSkipReason()})`;

describe(`journal encrypt and rekey on PostgreSQL killed before COMMIT${skipped}`, () => {
  pgIt('encrypt: SIGKILL leaves every row as it was and no key id; run again, nothing is plain', async () => {
    const url = freshStore('pg');
    await seed(url);
    const key = await newKey();
    const before = snapshotDir(url);
    const run = await crux(url, ['--key-file', key.file, 'journal', 'encrypt'], { env: { CRUX_TEST_CRASH_AT: 'pg-rewrite:staged' } });
    expect(run.exitCode, run.stderr).not.toBe(0);
    expect(snapshotDir(url)).toEqual(before);
    expect(keyRow(url)).toBe('');
    expect((await crux(url, ['session', 'get', 's'])).stdout).toBe(`{"v":"${SECRETS[1]}"}`);
    expect((await crux(url, ['journal', 'check'])).exitCode).toBe(0);
    const again = await crux(url, ['--key-file', key.file, 'journal', 'encrypt']);
    expect(again.exitCode, again.stderr).toBe(0);
    const text = dump(url);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(JSON.parse(keyRow(url)).key_id).toBe(key.id);
    expect((await crux(url, ['session', 'get', 's'])).exitCode).toBe(6);
    expect((await crux(url, ['--key-file', key.file, 'session', 'get', 's', '--at', '1'])).stdout).toBe(`{"v":"${SECRETS[0]}"}`);
    expect((await crux(url, ['journal', 'check'])).exitCode).toBe(0);
  });

  pgIt('rekey: SIGKILL leaves every value under the old key; run again, every value is under the new one', async () => {
    const url = freshStore('pg');
    const old = await newKey();
    const next = await newKey();
    await seed(url, ['--key-file', old.file]);
    const before = snapshotDir(url);
    const args = ['--key-file', old.file, 'journal', 'rekey', '--new-key-file', next.file];
    const run = await crux(url, args, { env: { CRUX_TEST_CRASH_AT: 'pg-rewrite:staged' } });
    expect(run.exitCode, run.stderr).not.toBe(0);
    expect(snapshotDir(url)).toEqual(before);
    expect(JSON.parse(keyRow(url)).key_id).toBe(old.id);
    expect(dump(url)).not.toContain(`crux-sealed-v1:${next.id}:`);
    expect((await crux(url, ['--key-file', old.file, 'session', 'get', 's'])).stdout).toBe(`{"v":"${SECRETS[1]}"}`);
    const again = await crux(url, args);
    expect(again.exitCode, again.stderr).toBe(0);
    const text = dump(url);
    expect(text).not.toContain(`crux-sealed-v1:${old.id}:`);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    expect(JSON.parse(keyRow(url)).key_id).toBe(next.id);
    expect((await crux(url, ['--key-file', next.file, 'session', 'get', 's', '--at', '1'])).stdout).toBe(`{"v":"${SECRETS[0]}"}`);
    expect((await crux(url, ['--key-file', old.file, 'session', 'get', 's'])).exitCode).toBe(6);
  });

  pgIt('a new store given a key: its first write killed before COMMIT records no key id, so a plain write after it stays plain', async () => {
    const url = freshStore('pg');
    const key = await newKey();
    const run = await crux(url, ['--key-file', key.file, 'session', 'put', 's', `{"v":"${SECRETS[0]}"}`], { env: { CRUX_TEST_CRASH_AT: 'pg-before-commit' } });
    expect(run.exitCode, run.stderr).not.toBe(0);
    expect(Object.keys(snapshotDir(url))).toEqual([]);
    expect((await crux(url, ['session', 'put', 't', `{"v":"${SECRETS[1]}"}`])).exitCode).toBe(0);
    expect(keyRow(url)).toBe('');
    expect(dump(url)).toContain(SECRETS[1]);
  });
});
