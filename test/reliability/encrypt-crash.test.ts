// `journal encrypt` and `journal rekey` (SPEC §13) are all or nothing under kill -9: bin/crux is killed at each
// crash point of the one record-rewrite path over a data directory whose sessions journal has a history piece and a
// quarantined item. Before the commit point every journal, history and quarantine byte is as it was; after it, the
// next holder of the lock (`journal check`) finishes the rewrite. Either way check is healthy, the session reads
// back with the key, and the same command run again leaves the store whole: nothing of it in plaintext (encrypt),
// nothing sealed with the old key (rekey).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, freshDataDir, tempDir, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { storeBytes } from '../helpers/lineage';

const SECRETS = ['plainsecret-one', 'plainsecret-two', 'plainsecret-sum', 'plainsecret-torn'];

async function newKey(): Promise<{ file: string; id: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim() };
}

/** A plain store: a history piece (a compaction), a journal, a quarantined torn tail, each holding plaintext. */
async function seed(dir: string, keyArgs: string[] = []): Promise<void> {
  const ok = async (args: string[]) => expect((await crux(dir, [...keyArgs, ...args])).exitCode).toBe(0);
  await ok(['session', 'put', 's', `{"v":"${SECRETS[0]}"}`]);
  await ok(['session', 'put', 's', `{"v":"${SECRETS[1]}"}`]);
  await ok(['journal', 'compact']);
  await ok(['session', 'close', 's', '--summary', SECRETS[2]!]);
  fs.appendFileSync(join(dir, 'sessions.jsonl'), `{"v":1,"seq":9,"data":"${SECRETS[3]}`);
  await ok(['session', 'put', 't', '{}']);
}

const journalBytes = (dir: string) => new Map([...storeBytes(dir)].filter(([name]) => !name.startsWith('keys/')));
const everything = (dir: string) =>
  [...storeBytes(dir).values()].join('\n') +
  fs
    .readdirSync(join(dir, 'cache'))
    .map((f) => fs.readFileSync(join(dir, 'cache', f), 'latin1'))
    .join('\n');

const POINTS: [string, 'old' | 'new'][] = [
  ['rewrite-set:staged', 'old'],
  ['rewrite-set:committed', 'new'],
  ['rewrite-set:moved#1', 'new'],
  ['rewrite-set:applied', 'new'],
];

describe('journal encrypt killed at each step', () => {
  it.each(POINTS)('SIGKILL at %s leaves the %s store; run again, it is encrypted whole', async (point, expected) => {
    const dir = freshDataDir();
    await seed(dir);
    const key = await newKey();
    const before = journalBytes(dir);
    const run = spawnSync(process.execPath, [CRUX, '--data-dir', dir, '--key-file', key.file, 'journal', 'encrypt'], {
      env: testEnv({ CRUX_TEST_CRASH_AT: point }),
      encoding: 'utf8',
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    // Nothing a reader takes changed: staged files have names no reader takes (the next lock holder sweeps them).
    if (expected === 'old') for (const [name, bytes] of before) expect(journalBytes(dir).get(name), name).toBe(bytes);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    const after = [...journalBytes(dir).values()].join('\n');
    if (expected === 'old') expect(journalBytes(dir)).toEqual(before);
    else for (const secret of SECRETS) expect(after).not.toContain(secret);
    expect((await crux(dir, ['--key-file', key.file, 'session', 'get', 's'])).stdout).toBe(`{"v":"${SECRETS[1]}"}`);
    // Run again: whole.
    expect((await crux(dir, ['--key-file', key.file, 'journal', 'encrypt'])).exitCode).toBe(0);
    for (const secret of SECRETS) expect(everything(dir)).not.toContain(secret);
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(dir, ['session', 'get', 's'])).exitCode).toBe(6);
    expect((await crux(dir, ['--key-file', key.file, 'session', 'get', 's', '--at', '1'])).stdout).toBe(`{"v":"${SECRETS[0]}"}`);
  });
});

describe('journal rekey killed at each step', () => {
  it.each(POINTS)('SIGKILL at %s leaves the %s store; run again, every value is under the new key', async (point, expected) => {
    const dir = freshDataDir();
    const old = await newKey();
    const next = await newKey();
    await seed(dir, ['--key-file', old.file]);
    const before = journalBytes(dir);
    const args = ['--data-dir', dir, '--key-file', old.file, 'journal', 'rekey', '--new-key-file', next.file];
    const run = spawnSync(process.execPath, [CRUX, ...args], { env: testEnv({ CRUX_TEST_CRASH_AT: point }), encoding: 'utf8' });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect((await crux(dir, ['journal', 'check'])).exitCode).toBe(0);
    const sealedWith = (id: string) => [...journalBytes(dir).values()].join('\n').includes(`crux-sealed-v1:${id}:`);
    if (expected === 'old') {
      expect(journalBytes(dir)).toEqual(before);
      expect(sealedWith(next.id)).toBe(false);
    } else expect(sealedWith(old.id)).toBe(false);
    const reader = expected === 'old' ? old : next;
    expect((await crux(dir, ['--key-file', reader.file, 'session', 'get', 's'])).stdout).toBe(`{"v":"${SECRETS[1]}"}`);
    // Run again: every value under the new key, and the store records it.
    const again = await crux(dir, args.slice(2));
    expect(again.exitCode, again.stderr).toBe(0);
    expect(sealedWith(old.id)).toBe(false);
    for (const secret of SECRETS) expect(everything(dir)).not.toContain(secret);
    expect(JSON.parse(fs.readFileSync(join(dir, 'keys', 'store-key.json'), 'utf8')).key_id).toBe(next.id);
    expect((await crux(dir, ['--key-file', next.file, 'session', 'get', 's', '--at', '1'])).stdout).toBe(`{"v":"${SECRETS[0]}"}`);
    expect((await crux(dir, ['--key-file', old.file, 'session', 'get', 's'])).exitCode).toBe(6);
  });
});
