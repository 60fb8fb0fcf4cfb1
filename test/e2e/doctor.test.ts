import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLock } from '../../src/journal/dir/lock/lock';
import { CRUX, crux as spawned, freshDataDir, snapshotDir, tempDir, testEnv } from '../helpers/cli';
import { crux } from '../helpers/run-cli';

const doctor = async (dir: string, args: string[] = [], env: Record<string, string> = {}, run$ = crux) => {
  const run = await run$(dir, ['doctor', '--json', ...args], { env });
  return { ...run, report: run.stdout ? JSON.parse(run.stdout) : undefined };
};
const codes = (report: { findings: { code: string }[] }) => report.findings.map((f) => f.code);

describe('crux doctor', () => {
  it('reports a never-written data directory as absence, exit 0, and creates nothing', async () => {
    const dir = freshDataDir();
    const { exitCode, report } = await doctor(dir);
    expect(exitCode).toBe(0);
    expect(report.healthy).toBe(true);
    expect(report.data_dir).toMatchObject({ path: dir, source: 'flag', exists: false });
    expect(report.journals.every((j: { exists: boolean }) => !j.exists)).toBe(true);
    expect(report.handoff_key.source).toBe('none');
    expect(codes(report)).toEqual(['data_dir_absent']);
    expect(fs.existsSync(dir)).toBe(false);
    const human = await crux(dir, ['doctor']);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain('not created yet');
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('names where the data directory came from: flag, env, xdg, default', async () => {
    const home = tempDir();
    const run = async (env: Record<string, string>, args: string[] = []) => {
      const r = await execa(CRUX, [...args, 'doctor', '--json'], {
        reject: false,
        env: testEnv({ HOME: home, XDG_DATA_HOME: undefined, ...env }),
        extendEnv: false,
      });
      return JSON.parse(String(r.stdout)).data_dir;
    };
    expect(await run({})).toMatchObject({ source: 'default', path: join(home, '.local/share/crux') });
    expect(await run({ XDG_DATA_HOME: join(home, 'xdg') })).toMatchObject({ source: 'xdg', path: join(home, 'xdg/crux') });
    expect(await run({ XDG_DATA_HOME: join(home, 'xdg'), CRUX_DATA_DIR: join(home, 'env') })).toMatchObject({ source: 'env', path: join(home, 'env') });
    expect(await run({ CRUX_DATA_DIR: join(home, 'env') }, ['--data-dir', join(home, 'flag')])).toMatchObject({
      source: 'flag',
      path: join(home, 'flag'),
      why: 'from --data-dir',
    });
    // A flag of one kind overrides the other kind's variable, and doctor says so.
    const shared = 'postgres://ops:pw@db.invalid/agents';
    expect(await run({ CRUX_STORE: shared }, ['--data-dir', join(home, 'flag')])).toMatchObject({
      source: 'flag',
      why: 'from --data-dir, which overrides CRUX_STORE',
    });
    expect(await run({ CRUX_DATA_DIR: join(home, 'env') })).toMatchObject({ why: 'from CRUX_DATA_DIR' });
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it('refuses CRUX_STORE and CRUX_DATA_DIR both set without a flag (exit 2: two stores), touching neither', async () => {
    const home = tempDir();
    const env = testEnv({ HOME: home, CRUX_STORE: 'postgres://ops:pw@127.0.0.1:1/agents', CRUX_DATA_DIR: join(home, 'throwaway') });
    for (const args of [['session', 'put', 'a', '{}'], ['session', 'list'], ['doctor']]) {
      const r = await execa(CRUX, args, { reject: false, env, extendEnv: false });
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(String(r.stderr)).toMatch(
        /^crux: CRUX_STORE and CRUX_DATA_DIR are both set: they name two stores \(unset one of them, or say which with --store or --data-dir\)$/,
      );
    }
    expect(fs.readdirSync(home)).toEqual([]);
    const flag = await execa(CRUX, ['--data-dir', join(home, 'flag'), 'session', 'put', 'a', '{}'], { reject: false, env, extendEnv: false });
    expect(flag.exitCode).toBe(0);
    expect(fs.readdirSync(home)).toEqual(['flag']);
  });

  it('shows the identities and how a scoped session id is spelled for them', async () => {
    const dir = freshDataDir();
    const flag = (await doctor(dir, ['--agent', 'build-bot', '--actor', 'ops'])).report.identity;
    expect(flag).toEqual({
      agent: 'build-bot',
      agent_source: 'flag',
      actor: 'ops',
      actor_source: 'flag',
      session_key: '__agent_session::build-bot::<id>',
      agent_key: null,
    });
    const env = (await doctor(dir, [], { CRUX_AGENT: 'a1', CRUX_ACTOR: 'cron' })).report.identity;
    expect(env).toMatchObject({ agent: 'a1', agent_source: 'env', actor_source: 'env', session_key: '__agent_session::a1::<id>' });
    const none = (await doctor(dir)).report.identity;
    expect(none).toMatchObject({ agent: null, agent_source: 'none', session_key: '<id>' });
    expect(none.agent_key).toBeNull();
    expect((await crux(dir, ['--agent', 'build-bot', 'handoff', 'keygen'])).exitCode).toBe(0);
    const keyed = (await doctor(dir, ['--agent', 'build-bot'])).report.identity;
    expect(keyed.agent_key.key_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it('reports journals: size, records, last write (newest record), health; exit 0 when healthy', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}', '--now', '2026-01-01T00:00:00Z']);
    await crux(dir, ['session', 'put', 'b', '{}', '--now', '2026-01-01T00:05:00Z']);
    const before = snapshotDir(dir);
    const { exitCode, report } = await doctor(dir, ['--now', '2026-01-01T00:06:00Z']);
    expect(exitCode).toBe(0);
    const sessions = report.journals.find((j: { file: string }) => j.file === 'sessions.jsonl');
    expect(sessions).toMatchObject({ exists: true, records: 2, last_write: '2026-01-01T00:05:00.000Z', healthy: true, problems: [] });
    expect(sessions.bytes).toBe(fs.statSync(join(dir, 'sessions.jsonl')).size);
    expect(report.data_dir).toMatchObject({ exists: true, mode: '0700', private: true });
    expect(report.lock).toMatchObject({ held: false, stale: false });
    expect(report.findings).toEqual([]);
    // The doctor only looks.
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('checks that the key index (a derived cache) advances with its journal', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}']);
    await crux(dir, ['session', 'put', 'b', '{}']);
    const valid = (await doctor(dir)).report;
    expect(valid.journals[0].index).toBe('valid');
    expect(codes(valid)).not.toContain('index_stale');
    // Anything that changes the journal's stat behind crux's back leaves the index describing an older file.
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(join(dir, 'sessions.jsonl'), later, later);
    const stale = (await doctor(dir)).report;
    expect(stale.journals[0].index).toBe('stale');
    expect(codes(stale)).toContain('index_stale');
    await crux(dir, ['session', 'put', 'c', '{}']);
    expect((await doctor(dir)).report.journals[0].index).toBe('valid');
  });

  it('exits 9 on a damaged journal, naming the line', async () => {
    const dir = freshDataDir();
    for (const id of ['a', 'b', 'c']) await crux(dir, ['session', 'put', id, '{}']);
    const path = join(dir, 'sessions.jsonl');
    const lines = fs.readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"b"', '"B"');
    fs.writeFileSync(path, lines.join('\n'));
    const { exitCode, report, stderr } = await doctor(dir);
    expect(exitCode).toBe(9);
    expect(report.healthy).toBe(false);
    expect(report.journals[0].problems[0]).toEqual({ line: 2, reason: 'hash mismatch' });
    expect(report.findings[0]).toMatchObject({ level: 'fault', code: 'journal_damaged' });
    expect(JSON.parse(stderr).error.code).toBe(9);
    const human = await crux(dir, ['doctor']);
    expect(human.exitCode).toBe(9);
    expect(human.stdout).toContain('sessions.jsonl: 1 problem(s), first at line 2: hash mismatch');
    expect((await crux(dir, ['doctor', '--quiet'])).stdout).toContain('damaged');
  });

  it('checks that derived state advances: stranded sessions, expired sessions nobody reaps, time going backwards', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'old', '{}', '--now', '2026-01-01T00:00:00Z']);
    await crux(dir, ['session', 'put', 'lease', '{}', '--ttl', '1h', '--now', '2026-01-03T00:00:00Z']);
    await crux(dir, ['--agent', 'bot', 'session', 'put', 'mine', '{}', '--now', '2026-01-03T00:00:00Z']);
    await crux(dir, ['session', 'put', 'late', '{}', '--now', '2026-01-02T23:00:00Z']);
    const { exitCode, report } = await doctor(dir, ['--now', '2026-01-03T02:00:00Z']);
    expect(exitCode).toBe(0);
    expect(report.sessions).toMatchObject({ total: 4, unscoped: 3, other_agents: 1, stranded_count: 1, overdue_reap_count: 1 });
    expect(report.sessions.stranded[0]).toMatchObject({ session_id: 'old', status: 'active', freshness: 'stale' });
    expect(report.sessions.overdue_reap[0]).toMatchObject({ session_id: 'lease', expires_at: '2026-01-03T01:00:00.000Z' });
    expect(codes(report)).toEqual(expect.arrayContaining(['stranded_sessions', 'reap_overdue', 'time_backwards', 'scoped_sessions']));
    expect(report.findings.find((f: { code: string }) => f.code === 'time_backwards').message).toContain('line 4');
    // Within the reaper's grace period an expired lease is not yet a finding; the thresholds follow CRUX_STALE_AFTER.
    const early = (await doctor(dir, ['--now', '2026-01-03T01:05:00Z'], { CRUX_STALE_AFTER: '7d' })).report;
    expect(early.sessions).toMatchObject({ stranded_count: 0, overdue_reap_count: 0 });
    // A closed session is never stranded.
    expect((await crux(dir, ['session', 'close', 'old', '--now', '2026-01-03T00:00:00Z'])).exitCode).toBe(0);
    expect((await doctor(dir, ['--now', '2026-01-03T00:30:00Z'])).report.sessions.stranded_count).toBe(0);
  });

  it('takes a step back within a lock wait for concurrent writers on one host, not for clocks that disagree', async () => {
    const dir = freshDataDir();
    // A writer that read the clock, then waited 8 s for the lock behind another: its record is 8 s older.
    await crux(dir, ['session', 'put', 'first', '{}', '--now', '2026-01-03T00:00:10Z']);
    await crux(dir, ['session', 'put', 'waited', '{}', '--now', '2026-01-03T00:00:02Z']);
    expect(codes((await doctor(dir, ['--now', '2026-01-03T00:01:00Z'])).report)).not.toContain('time_backwards');
    await crux(dir, ['session', 'put', 'skewed', '{}', '--now', '2026-01-02T23:58:00Z']);
    const finding = (await doctor(dir, ['--now', '2026-01-03T00:01:00Z'])).report.findings.find((f: { code: string }) => f.code === 'time_backwards');
    expect(finding.message).toContain('1 time(s), first at line 3');
  });

  it('shows the handoff key by source and fingerprint, never the key, and flags a key others can read', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}']);
    fs.mkdirSync(join(dir, 'keys'), { mode: 0o700 });
    const key = Buffer.alloc(32, 7);
    fs.writeFileSync(join(dir, 'keys/handoff.key'), key, { mode: 0o644 });
    fs.chmodSync(join(dir, 'keys/handoff.key'), 0o644);
    const file = (await doctor(dir)).report;
    expect(file.handoff_key).toMatchObject({ source: 'file', file: { path: 'keys/handoff.key', exists: true, mode: '0644', private: false }, shadowed: [] });
    expect(file.handoff_key.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(file)).not.toContain(key.toString('hex').slice(0, 16));
    expect(codes(file)).toContain('key_exposed');

    fs.chmodSync(join(dir, 'keys/handoff.key'), 0o600);
    const secret = (await doctor(dir, [], { CRUX_HANDOFF_SECRET: 's3cret' })).report;
    expect(secret.handoff_key).toMatchObject({ source: 'CRUX_HANDOFF_SECRET', shadowed: ['file'] });
    expect(codes(secret)).not.toContain('key_exposed');
    const other = (await doctor(dir, [], { CRUX_HANDOFF_SECRET: 'other' })).report;
    expect(other.handoff_key.fingerprint).not.toBe(secret.handoff_key.fingerprint);
    const compat = (await doctor(dir, [], { CRUX_MCP_HANDOFF_SECRET: 's3cret' })).report;
    expect(compat.handoff_key.source).toBe('CRUX_MCP_HANDOFF_SECRET');
    expect(compat.handoff_key.fingerprint).not.toBe(secret.handoff_key.fingerprint);
    expect(codes(compat)).toContain('compat_key');
  });

  it('tells whether the lock is held right now, and by whom; never a stale lock', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}']);
    const lock = await acquireLock(dir, 1000);
    try {
      // The lock held by this process: doctor looks from another.
      const { exitCode, report } = await doctor(dir, [], {}, spawned);
      expect(exitCode).toBe(0);
      expect(report.lock).toMatchObject({ held: true, stale: false, holder: { pid: process.pid } });
      expect(codes(report)).toContain('lock_held');
    } finally {
      await lock.release();
    }
    expect((await doctor(dir)).report.lock.held).toBe(false);
  });

  it('notes quarantined items', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'a', '{}']);
    fs.appendFileSync(join(dir, 'sessions.jsonl'), '{"torn');
    expect((await doctor(dir)).exitCode).toBe(9);
    await crux(dir, ['session', 'put', 'b', '{}']);
    const { exitCode, report } = await doctor(dir);
    expect(exitCode).toBe(0);
    expect(report.quarantine.count).toBe(1);
    expect(report.quarantine.items[0]).toMatch(/^sessions\.jsonl\./);
    expect(codes(report)).toContain('quarantine');
  });
});
