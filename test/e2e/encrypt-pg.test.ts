// Encrypted at rest on PostgreSQL (SPEC §13, §11), through the built bin/crux against the test run's server: a
// store created with a key holds no plaintext of states or free text in any row (`pg_dump` of its schema, and the
// same dump of a plain store does hold them), records its key id as a row, never sends the key; reads that need
// plaintext exit 6 naming the key id, lists/check/reap/doctor work without it; journal encrypt/rekey/decrypt
// rewrite every row in one transaction; the data directory and PostgreSQL answer alike.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, freshStore, crux as spawned, tempDir, type StoreKind } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { pgAvailable, pgSkipReason, psql } from '../helpers/pg';

const SECRETS = ['hunter2state', 'hunter3summary', 'hunter4reason', 'hunter5message', 'hunter6accepted'];
const ENV = { env: { CRUX_HANDOFF_SECRET: 'a secret both hosts share' } };

/** The schema's whole dump (DDL and every row), as a DBA or a backup sees it. */
function dumpSchema(url: string): string {
  const u = new URL(url);
  const schema = u.searchParams.get('schema')!;
  u.searchParams.delete('schema');
  return execFileSync('pg_dump', ['--no-owner', '--schema', schema, u.href], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

async function newKey(): Promise<{ file: string; id: string; text: string }> {
  const file = join(tempDir(), 'store.key');
  const r = await crux(freshDataDir(), ['key', 'new', '--out', file]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { file, id: r.stdout.trim(), text: fs.readFileSync(file, 'utf8').trim() };
}

/** Puts, closes, archives and a handoff minted and accepted, each carrying a marker of its own. */
async function fill(store: string, keyArgs: string[]): Promise<void> {
  const run = async (args: string[]) => {
    const r = await crux(store, [...keyArgs, ...args], ENV);
    expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r;
  };
  await run(['--agent', 'a', 'session', 'put', 's1', `{"x":"${SECRETS[0]}"}`]);
  await run(['--agent', 'a', 'session', 'put', 's2', '{"y":1}']);
  await run(['--agent', 'a', 'session', 'archive', 's2', '--reason', SECRETS[2]!]);
  const pkg = join(tempDir(), 'pkg.json');
  await run(['handoff', 'mint', 's1', '--from', 'a', '--to', 'b', '--message', SECRETS[3]!, '--out', pkg]);
  await run(['handoff', 'accept', pkg, '--as', 'b']);
  await run(['--agent', 'a', 'session', 'close', 's1', '--summary', SECRETS[1]!]);
  await run(['--agent', 'c', 'session', 'put', 's3', `{"z":"${SECRETS[4]}"}`]);
}

const pgIt = it.skipIf(!pgAvailable());
const skipped = pgSkipReason() === undefined ? '' : ` (skipped: ${pgSkipReason()})`;

describe(`an encrypted PostgreSQL store${skipped}`, () => {
  pgIt('holds no plaintext of a state or free text in any row (pg_dump), a plain one does; its key id is a row, never the key', async () => {
    const plain = freshStore('pg');
    await fill(plain, []);
    const plainDump = dumpSchema(plain);
    for (const secret of SECRETS) expect(plainDump, `plain store holds ${secret}`).toContain(secret);

    const url = freshStore('pg');
    const key = await newKey();
    await fill(url, ['--key-file', key.file]);
    // Derived rows too: the snapshot rows and secondary index rows, after a compaction and a check's rebuild.
    expect((await crux(url, ['journal', 'compact'])).exitCode).toBe(0);
    expect((await crux(url, ['--key-file', key.file, '--agent', 'c', 'session', 'put', 's3', `{"z":"${SECRETS[4]}!"}`])).exitCode).toBe(0);
    const dump = dumpSchema(url);
    for (const secret of SECRETS) expect(dump, `encrypted store holds ${secret}`).not.toContain(secret);
    expect(dump).not.toContain(key.text);
    expect(dump).not.toContain(key.text.slice('crux-key-v1:'.length));
    const schema = new URL(url).searchParams.get('schema')!;
    expect(JSON.parse(psql(`select convert_from(bytes, 'utf8') from "${schema}".keys where name = 'store-key.json'`, url))).toEqual({
      key_id: key.id,
      cipher: 'aes-256-gcm',
    });
  });

  // Every statement and parameter the server received, from its own log: a role of this test's own logs them all.
  const logIt = it.skipIf(!pgAvailable() || !process.env.CRUX_TEST_PG_DIR);
  logIt('the key and the plaintext never reach the server: no statement or parameter it logged holds them', async () => {
    const role = `crux_log_${Date.now().toString(36)}`;
    psql(`create role ${role} login password 'log-pw'; alter role ${role} set log_statement = 'all'; grant create on database postgres to ${role}`);
    const url = new URL(freshStore('pg'));
    url.username = role;
    url.password = 'log-pw';
    const logFile = join(process.env.CRUX_TEST_PG_DIR!, 'server.log');
    const start = fs.statSync(logFile).size;
    const key = await newKey();
    await fill(url.href, ['--key-file', key.file]);
    expect((await crux(url.href, ['--key-file', key.file, '--agent', 'a', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    const other = await newKey();
    expect((await crux(url.href, ['--key-file', key.file, 'journal', 'rekey', '--new-key-file', other.file])).exitCode).toBe(0);
    const log = fs.readFileSync(logFile, 'latin1').slice(start);
    // The log does hold what this role sent: its inserts, and the sealed values as parameters.
    expect(log).toContain(`crux-sealed-v1:${key.id}:`);
    expect(log).toContain(`crux-sealed-v1:${other.id}:`);
    for (const k of [key, other]) {
      expect(log).not.toContain(k.text.slice('crux-key-v1:'.length));
      expect(log).not.toContain(Buffer.from(k.text.slice('crux-key-v1:'.length), 'base64url').toString('hex'));
    }
    for (const secret of SECRETS) expect(log, secret).not.toContain(secret);
  });

  pgIt('needs the key (6, naming its id) to read plaintext or write a state; lists, reap, check and doctor do not', async () => {
    const url = freshStore('pg');
    const key = await newKey();
    const withKey = (args: string[]) => crux(url, ['--key-file', key.file, ...args], ENV);
    await fill(url, ['--key-file', key.file]);
    const handoffId = JSON.parse((await crux(url, ['--json', 'handoff', 'list'], ENV)).stdout).handoffs[0].handoff_id;
    for (const args of [
      ['--agent', 'a', 'session', 'get', 's1'],
      ['session', 'export'],
      ['session', 'put', 's9', '{}'],
      ['handoff', 'export', handoffId],
    ]) {
      const r = await crux(url, args, ENV);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(6);
      expect(r.stderr).toContain(key.id);
      expect(r.stderr).not.toContain(key.text);
    }
    const other = await newKey();
    const wrong = await crux(url, ['--key-file', other.file, '--agent', 'a', 'session', 'get', 's1']);
    expect(wrong.exitCode).toBe(6);
    expect(wrong.stderr).toContain(key.id);
    const list = JSON.parse((await crux(url, ['--json', 'session', 'list', '--all', '--all-agents'])).stdout).sessions;
    expect(list.find((s: any) => s.session_id === 's2').archive_reason).toBe(`[sealed:${key.id}]`);
    for (const args of [['journal', 'check'], ['session', 'reap'], ['doctor'], ['handoff', 'list'], ['journal', 'compact']]) {
      const r = await crux(url, args, ENV);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect((await withKey(['--agent', 'a', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    expect((await withKey(['--agent', 'b', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
  });

  pgIt('a key given to a plain store is ignored with one warning, and nothing is sealed', async () => {
    const url = freshStore('pg');
    expect((await crux(url, ['session', 'put', 's1', '{"plain":1}'])).exitCode).toBe(0);
    const { file, id } = await newKey();
    const r = await crux(url, ['--key-file', file, 'session', 'put', 's2', '{"plain":2}']);
    expect(r.exitCode).toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(id);
    expect(r.stderr).toContain('crux journal encrypt');
    expect(dumpSchema(url)).toContain('{\\\\"plain\\\\":2}');
  });

  pgIt('a read given a key on a plain store warns once too; on an encrypted or empty store it says nothing', async () => {
    // Processes: the warning is once a process (in-process, an earlier command of this file's could have given it).
    const url = freshStore('pg');
    expect((await spawned(url, ['session', 'put', 's1', '{"plain":1}'])).exitCode).toBe(0);
    const { file, id } = await newKey();
    for (const args of [
      ['session', 'list'],
      ['session', 'get', 's1'],
    ]) {
      const r = await spawned(url, ['--key-file', file, ...args]);
      expect(r.exitCode, args.join(' ')).toBe(0);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toContain(id);
      expect(r.stderr).toContain('crux journal encrypt');
    }
    const sealed = freshStore('pg');
    expect((await spawned(sealed, ['--key-file', file, 'session', 'put', 's1', '{"x":1}'])).exitCode).toBe(0);
    const quiet = await spawned(sealed, ['--key-file', file, 'session', 'list']);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).toBe('');
    const empty = await spawned(freshStore('pg'), ['--key-file', file, 'session', 'list']);
    expect(empty.stderr).toBe('');
  });
});

describe(`journal encrypt, rekey, decrypt on PostgreSQL${skipped}`, () => {
  pgIt('turn a plain store into an encrypted one and back, every row, refusing what does not fit (5, 4, 6)', async () => {
    const url = freshStore('pg');
    await fill(url, []);
    const key = await newKey();
    const other = await newKey();
    expect((await crux(url, ['journal', 'encrypt'])).exitCode).toBe(5);
    expect((await crux(url, ['--key-file', key.file, 'journal', 'decrypt'])).exitCode).toBe(4);
    const enc = await crux(url, ['--json', '--key-file', key.file, 'journal', 'encrypt']);
    expect(enc.exitCode, enc.stderr).toBe(0);
    expect(JSON.parse(enc.stdout)).toMatchObject({ change: 'encrypt', key_id: key.id });
    const dump = dumpSchema(url);
    for (const secret of SECRETS) expect(dump, secret).not.toContain(secret);
    expect((await crux(url, ['--agent', 'a', 'session', 'get', 's1'])).exitCode).toBe(6);
    expect((await crux(url, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(url, ['--key-file', other.file, 'journal', 'encrypt'])).exitCode).toBe(4);
    expect((await crux(url, ['--key-file', other.file, 'journal', 'rekey', '--new-key-file', key.file])).exitCode).toBe(6);
    const rekey = await crux(url, ['--key-file', key.file, 'journal', 'rekey', '--new-key-file', other.file]);
    expect(rekey.exitCode, rekey.stderr).toBe(0);
    expect((await crux(url, ['--key-file', key.file, '--agent', 'a', 'session', 'get', 's1'])).exitCode).toBe(6);
    expect((await crux(url, ['--key-file', other.file, '--agent', 'a', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    for (const secret of SECRETS) expect(dumpSchema(url), secret).not.toContain(secret);
    expect((await crux(url, ['--key-file', other.file, 'journal', 'decrypt'])).exitCode).toBe(0);
    const schema = new URL(url).searchParams.get('schema')!;
    expect(psql(`select count(*) from "${schema}".keys where name = 'store-key.json'`, url).trim()).toBe('0');
    expect((await crux(url, ['--agent', 'a', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    for (const secret of SECRETS) expect(dumpSchema(url), secret).toContain(secret);
    expect((await crux(url, ['journal', 'check'])).exitCode).toBe(0);
  });
});

/** What a store shows of the same history: lists (sealed text named by its key id), gets, the handoff ledger. */
async function answers(kind: StoreKind, key: { file: string; id: string }): Promise<unknown> {
  const store = freshStore(kind);
  await fill(store, ['--key-file', key.file]);
  const k = (args: string[]) => crux(store, ['--key-file', key.file, ...args], ENV);
  const sessions = (r: { stdout: string }) =>
    JSON.parse(r.stdout).sessions.map((s: any) => [s.session_id, s.agent ?? null, s.status, s.summary ?? null, s.archive_reason ?? null, s.state_bytes]);
  return {
    listed: sessions(await crux(store, ['--json', 'session', 'list', '--all', '--all-agents'])),
    opened: sessions(await k(['--json', 'session', 'list', '--all', '--all-agents'])),
    gets: [(await k(['--agent', 'a', 'session', 'get', 's1'])).stdout, (await k(['--agent', 'b', 'session', 'get', 's1'])).stdout],
    refused: (await crux(store, ['--agent', 'c', 'session', 'get', 's3'])).exitCode,
    handoffs: JSON.parse((await crux(store, ['--json', 'handoff', 'list'], ENV)).stdout).handoffs.map((h: any) => [
      h.direction,
      h.source_agent,
      h.target_agent,
      h.status,
      h.message,
    ]),
    opened_handoffs: JSON.parse((await k(['--json', 'handoff', 'list'])).stdout).handoffs.map((h: any) => h.message),
  };
}

describe(`the data directory and PostgreSQL agree on an encrypted store${skipped}`, () => {
  pgIt('the same writes with the same key show the same answers on both engines', async () => {
    const key = await newKey();
    const [dir, pg] = [await answers('dir', key), await answers('pg', key)];
    expect(pg).toEqual(dir);
    expect(JSON.stringify(dir)).toContain(`[sealed:${key.id}]`);
  });
});

describe(`journal copy between an encrypted data directory and PostgreSQL${skipped}`, () => {
  pgIt('carries the sealed rows and the key id both ways, without the key; the copy reads with the key only', async () => {
    const key = await newKey();
    const dir = freshDataDir();
    await fill(dir, ['--key-file', key.file]);
    const url = freshStore('pg');
    const copied = await crux(dir, ['journal', 'copy', '--to', url]);
    expect(copied.exitCode, copied.stderr).toBe(0);
    const text = dumpSchema(url);
    for (const secret of SECRETS) expect(text, secret).not.toContain(secret);
    expect((await crux(url, ['--agent', 'a', 'session', 'get', 's1'])).exitCode).toBe(6);
    expect((await crux(url, ['--key-file', key.file, '--agent', 'a', 'session', 'get', 's1'])).stdout).toBe(`{"x":"${SECRETS[0]}"}`);
    // A write on the copy seals with the key it records (and without the key is refused).
    expect((await crux(url, ['session', 'put', 'n', '{"fresh":"plainsecret-new"}'])).exitCode).toBe(6);
    expect((await crux(url, ['--key-file', key.file, 'session', 'put', 'n', '{"fresh":"plainsecret-new"}'])).exitCode).toBe(0);
    expect(dumpSchema(url)).not.toContain('plainsecret-new');
    const back = freshDataDir();
    expect((await crux(url, ['journal', 'copy', '--to', back])).exitCode).toBe(0);
    expect(JSON.parse(fs.readFileSync(join(back, 'keys', 'store-key.json'), 'utf8')).key_id).toBe(key.id);
    expect((await crux(back, ['--key-file', key.file, 'session', 'get', 'n'])).stdout).toBe('{"fresh":"plainsecret-new"}');
    expect((await crux(back, ['journal', 'check'])).exitCode).toBe(0);
  });
  pgIt('cases: text sealed, words as keyed hashes in the term rows; retrieve ranks as on a plain store; without the key exit 6', async () => {
    const key = await newKey();
    const plain = freshStore('pg');
    const sealed = freshStore('pg');
    const cases = [
      ['zebrafish migration pipeline', 'ran flamingo script', 'success', 'deploy'],
      ['zebrafish schema rollback', 'restored the flamingo backup', 'failure', 'db'],
      ['rotate the pelican certificates', 'renewed via pelican tool', 'success', 'deploy'],
      ['pipeline cache warmup for zebrafish', 'primed the cache', 'success', 'ci'],
    ];
    for (const [store, keyArgs] of [
      [plain, []],
      [sealed, ['--key-file', key.file]],
    ] as const) {
      for (const [task, action, outcome, tag] of cases) {
        const r = await crux(store, [...keyArgs, 'case', 'record', '--task', task!, '--action', action!, '--outcome', outcome!, '--tag', tag!]);
        expect(r.exitCode, r.stderr).toBe(0);
      }
    }
    const ranked = async (store: string, keyArgs: readonly string[], args: string[]) => {
      const r = await crux(store, [...keyArgs, 'case', ...args, '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as { results?: { similarity: number; case: { task: string } }[]; cases?: { task: string }[] };
      return (doc.results ?? doc.cases ?? []).map((x) => ('case' in x ? `${x.case.task} ${x.similarity}` : x.task));
    };
    for (const args of [
      ['retrieve', 'zebrafish pipeline'],
      ['retrieve', 'pelican'],
      ['retrieve', 'flamingo nothing-matches-this'],
      ['retrieve', 'zebrafish', '--only-success'],
      ['list', '--tag', 'deploy'],
    ]) {
      const want = await ranked(plain, [], args);
      expect(await ranked(sealed, ['--key-file', key.file], args), args.join(' ')).toEqual(want);
    }
    expect(await ranked(sealed, ['--key-file', key.file], ['retrieve', 'zebrafish pipeline'])).not.toEqual([]);
    const dump = dumpSchema(sealed);
    for (const word of ['zebrafish', 'flamingo', 'pelican', 'warmup']) expect(dump, word).not.toContain(word);
    for (const args of [
      ['case', 'retrieve', 'zebrafish'],
      ['case', 'list', '--tag', 'deploy'],
    ]) {
      const r = await crux(sealed, args);
      expect(r.exitCode, args.join(' ')).toBe(6);
      expect(r.stderr).toContain(key.id);
    }
    // doctor reads the key-id row: encrypted, which key, and that none was given.
    const doctor = await crux(sealed, ['doctor', '--json']);
    expect((JSON.parse(doctor.stdout) as { encryption: unknown }).encryption).toEqual({ encrypted: true, key_id: key.id, key_given: null });
    expect((JSON.parse((await crux(plain, ['doctor', '--json'])).stdout) as { encryption: unknown }).encryption).toEqual({
      encrypted: false,
      key_id: null,
      key_given: null,
    });
  });
});
