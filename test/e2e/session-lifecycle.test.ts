// Every session command and exit code through the built CLI, one fresh store per test (a data directory, and a
// PostgreSQL store: the same commands, codes and --json shapes).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeEachStore, freshDataDir, freshStore, journalLines as storedLines, snapshotDir, storeExists, tempDir } from '../helpers/cli';
// In-process: what these commands answer, not the process (test/helpers/run-cli.ts).
import { crux } from '../helpers/run-cli';

const NOW = '2026-03-01T12:00:00.000Z';
const at = (t: string) => ['--now', t];
const json = (run: { stdout: string }) => JSON.parse(run.stdout);
const journalLines = (store: string) => storedLines(store, 'sessions.jsonl').map((l) => JSON.parse(l));

const S_FIELDS = [
  'session_id',
  'agent',
  'status',
  'updated_at',
  'total_tokens',
  'expires_at',
  'archived',
  'archived_at',
  'archive_reason',
  'actor',
  'freshness',
];

describeEachStore('on a %s store', (kind) => {
  const freshDataDir = () => freshStore(kind);

  describe('session put / get', () => {
    it('stores with ttl, tokens and actor, and answers {"session": S}', async () => {
      const dir = freshDataDir();
      const put = await crux(dir, [
        '--json',
        '--actor',
        'ops',
        ...at(NOW),
        'session',
        'put',
        'a',
        '{"n":1}',
        '--ttl',
        '2h',
        '--tokens',
        '10',
        '--add-tokens',
        '5',
      ]);
      expect(put.exitCode).toBe(0);
      const s = json(put).session;
      for (const f of S_FIELDS) expect(s, f).toHaveProperty(f);
      expect(s).toMatchObject({
        session_id: 'a',
        agent: null,
        status: 'active',
        total_tokens: 15,
        expires_at: '2026-03-01T14:00:00.000Z',
        actor: 'ops',
        archived: false,
        freshness: 'fresh',
      });
      const add = await crux(dir, ['--json', ...at(NOW), 'session', 'put', 'a', '{"n":2}', '--add-tokens', '5', '--expires-at', '2026-03-02T00:00:00+02:00']);
      expect(json(add).session).toMatchObject({ total_tokens: 20, expires_at: '2026-03-01T22:00:00.000Z', actor: null });
      const file = join(tempDir(), 'state.json');
      fs.writeFileSync(file, '{"from":"file"}\n');
      expect((await crux(dir, ['session', 'put', 'a', '--file', file])).exitCode).toBe(0);
      expect((await crux(dir, ['session', 'get', 'a'])).stdout).toBe('{"from":"file"}\n');
      const get = await crux(dir, ['--json', 'session', 'get', 'a']);
      expect(json(get).session).toMatchObject({ session_id: 'a', total_tokens: 20, state: { from: 'file' } });
      expect((await crux(dir, ['--quiet', 'session', 'put', 'a', '1'])).stdout).toBe('');
    });

    it('reads the state from standard input without an argument or with -, byte-for-byte', async () => {
      const dir = freshDataDir();
      const state = '{"via": "stdin", "n": 1.0}\n';
      for (const args of [
        ['session', 'put', 'a'],
        ['session', 'put', 'a', '-'],
        ['session', 'put', 'a', '--file', '-'],
      ]) {
        expect((await crux(dir, args, { input: state })).exitCode, args.join(' ')).toBe(0);
        expect((await crux(dir, ['session', 'get', 'a'])).stdout).toBe(state);
      }
      expect((await crux(dir, ['session', 'put', 'a', '-', '--file', '-'], { input: state })).exitCode).toBe(2);
    });

    it('enforces the token ceiling (flag and CRUX_SESSION_TOKEN_BUDGET) and the state size (CRUX_MAX_STATE_BYTES)', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{}', '--tokens', '90']);
      const before = snapshotDir(dir);
      const over = await crux(dir, ['session', 'put', 'a', '{}', '--add-tokens', '20', '--max-tokens', '100']);
      expect(over.exitCode).toBe(5);
      expect(over.stderr).toContain('over the budget of 100');
      expect((await crux(dir, ['session', 'put', 'a', '{}', '--add-tokens', '20'], { env: { CRUX_SESSION_TOKEN_BUDGET: '100' } })).exitCode).toBe(5);
      expect((await crux(dir, ['session', 'put', 'a', '"12345678"'], { env: { CRUX_MAX_STATE_BYTES: '9' } })).exitCode).toBe(5);
      expect(snapshotDir(dir)).toEqual(before);
      expect((await crux(dir, ['session', 'put', 'a', '"1234567"'], { env: { CRUX_MAX_STATE_BYTES: '9' } })).exitCode).toBe(0);
      expect((await crux(dir, ['session', 'put', 'a', '{}', '--add-tokens', '10', '--max-tokens', '100'])).exitCode).toBe(0);
    });

    it('refuses bad input with 5 or 2 and leaves the data directory byte-identical', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{}']);
      const before = snapshotDir(dir);
      const cases: [string[], number, Record<string, string>?][] = [
        [['session', 'put', 'a', '{}', '--ttl', '10 minutes'], 5],
        [['session', 'put', 'a', '{}', '--ttl', '-5m'], 5],
        [['session', 'put', 'a', '{}', '--ttl', '0s'], 5],
        [['session', 'put', 'a', '{}', '--ttl', '0h0m'], 5],
        [['--now', '9999-12-31T23:00:00Z', 'session', 'put', 'a', '{}', '--ttl', '2h'], 5],
        [['session', 'put', 'a', '{}', '--expires-at', 'tomorrow'], 5],
        [['session', 'put', 'a', '{}', '--expires-at', '2026-02-30T00:00:00Z'], 5],
        [['session', 'put', 'a', '{}', '--tokens', '-1'], 5],
        [['session', 'put', 'a', '{}', '--tokens', '1.5'], 5],
        [['session', 'put', 'a', '{}', '--tokens', '99999999999999999999'], 5],
        [['session', 'put', 'a', '{}', '--max-tokens', 'lots'], 5],
        [['session', 'put', 'a', '{}'], 5, { CRUX_SESSION_TOKEN_BUDGET: 'x' }],
        [['session', 'put', 'a', '{}'], 5, { CRUX_MAX_STATE_BYTES: '-3' }],
        [['session', 'put', 'a', '{}', '--ttl'], 2],
        [['session', 'put', 'a', '{}', '--ttl', '1h', '--expires-at', NOW], 2],
        [['session', 'put'], 2],
        [['session', 'put', 'a::b', '{}'], 5],
        [['session', 'put', 'a\tb', '{}'], 5],
        [['session', 'put', 'x'.repeat(257), '{}'], 5],
        [['--agent', 'bad::agent', 'session', 'put', 'a', '{}'], 5],
        [['--agent', '', 'session', 'put', 'a', '{}'], 5],
        // Agent `a:` + id `x` and agent `a` + id `:x` would share __agent_session::a:::x.
        [['--agent', 'a:', 'session', 'put', 'x', '{}'], 5],
        [['--agent', 'a', 'session', 'put', ':x', '{}'], 5],
        [['session', 'put', 'x:', '{}'], 5],
        [['session', 'put', 'a', '{}'], 5, { CRUX_AGENT: 'x\u0001' }],
        [['--now', 'yesterday', 'session', 'put', 'a', '{}'], 5],
        [['session', 'put', 'a', '{}'], 5, { CRUX_NOW: '2026-13-01T00:00:00Z' }],
        [['session', 'put', 'a', '{"a":1'], 5],
        [['session', 'list', '--fresh-for', '2h', '--stale-after', '1h'], 5],
        [['session', 'list', '--stale-after', 'soon'], 5],
        [['session', 'list'], 5, { CRUX_FRESH_FOR: 'x' }],
        [['session', 'close', 'a', '--outcome', 'exploded'], 5],
        [['session', 'close', 'a', '--outcome', 'expired'], 5],
        [['session', 'close', 'a', '--outcome'], 2],
        [['session', 'delete', 'a'], 2],
        [['session', 'frobnicate'], 2],
        [['session', 'list', '--bogus'], 2],
      ];
      for (const [args, code, env] of cases) {
        const run = await crux(dir, args, env ? { env } : {});
        expect(run.exitCode, `${args.join(' ')} ${JSON.stringify(env ?? {})}: ${run.stderr}`).toBe(code);
        // SPEC §2: one line `crux: <what went wrong> (<hint>)`, and the same hint in the JSON error object.
        expect(run.stderr).toMatch(/^crux: .+ \(.+\)\n$/);
        const asJson = await crux(dir, ['--json', ...args], env ? { env } : {});
        expect(JSON.parse(asJson.stderr).error).toMatchObject({ code, hint: expect.stringMatching(/.+/) });
      }
      // Binary, empty and whitespace-only stdin.
      for (const input of [Buffer.from([0x00, 0xff, 0x13, 0x37]), '', '   \n']) {
        expect((await crux(dir, ['session', 'put', 'a'], { input })).exitCode).toBe(5);
      }
      expect(snapshotDir(dir)).toEqual(before);
    });

    it('reports errors as one JSON document on stderr with --json', async () => {
      const run = await crux(freshDataDir(), ['--json', 'session', 'get', 'nope']);
      expect(run.exitCode).toBe(3);
      expect(JSON.parse(run.stderr)).toEqual({ error: { code: 3, kind: 'not_found', message: 'no session "nope"', hint: 'see `crux session list`' } });
    });
  });

  describe('session archive / unarchive / delete', () => {
    it('archives (scrubbed reason), hides from list, unarchives; illegal moves exit 4 naming state and allowed ops', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{"keep":true}']);
      const archived = await crux(dir, ['--json', 'session', 'archive', 'a', '--reason', 'moved to https://bot:ghp_secret@github.com/o/r']);
      expect(archived.exitCode).toBe(0);
      expect(json(archived).session).toMatchObject({ status: 'archived', archived: true, archive_reason: 'moved to https://github.com/o/r' });
      expect(archived.stdout).not.toContain('ghp_secret');
      expect(storedLines(dir, 'sessions.jsonl').join('\n')).not.toContain('ghp_secret');
      expect(json(await crux(dir, ['--json', 'session', 'list'])).sessions).toEqual([]);
      expect(json(await crux(dir, ['--json', 'session', 'list', '--archived'])).sessions.map((s: any) => s.session_id)).toEqual(['a']);
      const before = snapshotDir(dir);
      for (const args of [
        ['session', 'archive', 'a'],
        ['session', 'put', 'a', '{}'],
      ]) {
        const run = await crux(dir, args);
        expect(run.exitCode).toBe(4);
        expect(run.stderr).toContain('it is archived');
        expect(run.stderr).toContain('allows: unarchive, close');
      }
      expect(snapshotDir(dir)).toEqual(before);
      expect((await crux(dir, ['session', 'get', 'a'])).stdout).toBe('{"keep":true}');
      const un = await crux(dir, ['--json', 'session', 'unarchive', 'a']);
      expect(json(un).session).toMatchObject({ status: 'active', archived: false, archived_at: null, archive_reason: null });
      const again = await crux(dir, ['session', 'unarchive', 'a']);
      expect(again.exitCode).toBe(4);
      expect(again.stderr).toContain('it is active');
      for (const args of [
        ['session', 'archive', 'zz'],
        ['session', 'unarchive', 'zz'],
        ['session', 'close', 'zz'],
        ['session', 'delete', 'zz', '--yes'],
        ['session', 'get', 'zz'],
      ]) {
        expect((await crux(dir, args)).exitCode, args.join(' ')).toBe(3);
      }
    });

    it('delete needs --yes (2, nothing changed), then removes for good: {"deleted": id}', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{}']);
      await crux(dir, ['session', 'close', 'a']);
      const before = snapshotDir(dir);
      const refused = await crux(dir, ['session', 'delete', 'a']);
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain('--yes');
      expect(snapshotDir(dir)).toEqual(before);
      const del = await crux(dir, ['--json', 'session', 'delete', 'a', '--yes']);
      expect(del.exitCode).toBe(0);
      expect(json(del)).toMatchObject({ deleted: 'a' });
      expect((await crux(dir, ['session', 'get', 'a'])).exitCode).toBe(3);
      expect((await crux(dir, ['session', 'delete', 'a', '--yes'])).exitCode).toBe(3);
      expect((await crux(dir, ['session', 'put', 'a', '{"new":1}'])).exitCode).toBe(0);
    });
  });

  describe('session close', () => {
    it('closes with outcome and scrubbed summary; later closes report the original record (exit 0)', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{}']);
      const first = await crux(dir, ['--json', ...at(NOW), 'session', 'close', 'a', '--outcome', 'failed', '--summary', 'log at https://u:pw@ci.example/1']);
      expect(first.exitCode).toBe(0);
      expect(json(first)).toMatchObject({
        outcome: 'closed',
        session: { status: 'closed', outcome: 'failed', summary: 'log at https://ci.example/1', closed_at: NOW },
      });
      const second = await crux(dir, ['--json', ...at('2026-03-02T00:00:00Z'), 'session', 'close', 'a', '--outcome', 'abandoned', '--summary', 'again']);
      expect(second.exitCode).toBe(0);
      expect(json(second)).toMatchObject({ outcome: 'already_closed', session: { outcome: 'failed', summary: 'log at https://ci.example/1', closed_at: NOW } });
      const human = await crux(dir, ['session', 'close', 'a']);
      expect(human.stdout).toContain('already closed');
      expect(journalLines(dir).filter((r) => r.ev === 'session.closed')).toHaveLength(1);
      const put = await crux(dir, ['session', 'put', 'a', '{}']);
      expect(put.exitCode).toBe(4);
      expect(put.stderr).toContain('it is closed');
      expect(json(await crux(dir, ['--json', 'session', 'list'])).sessions).toEqual([]);
      expect(json(await crux(dir, ['--json', 'session', 'list', '--all'])).sessions).toHaveLength(1);
    });

    it('defaults the outcome to completed', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'a', '{}']);
      expect(json(await crux(dir, ['--json', 'session', 'close', 'a'])).session.outcome).toBe('completed');
    });
  });

  describe('session reap', () => {
    it('closes every expired session as expired, across agents, once; --dry-run writes nothing', async () => {
      const dir = freshDataDir();
      await crux(dir, [...at(NOW), 'session', 'put', 'old', '{}', '--ttl', '1h']);
      await crux(dir, [...at(NOW), '--agent', 'bob', 'session', 'put', 'old', '{}', '--ttl', '30m']);
      await crux(dir, [...at(NOW), 'session', 'put', 'young', '{}', '--ttl', '7d']);
      await crux(dir, [...at(NOW), 'session', 'put', 'forever', '{}']);
      await crux(dir, [...at(NOW), 'session', 'put', 'parked', '{}', '--ttl', '1m']);
      await crux(dir, [...at(NOW), 'session', 'archive', 'parked']);
      const later = at('2026-03-01T14:00:00Z');
      const before = snapshotDir(dir);
      const dry = await crux(dir, ['--json', ...later, 'session', 'reap', '--dry-run']);
      expect(json(dry)).toMatchObject({ reaped: ['old', 'old', 'parked'], count: 3, dry_run: true });
      expect(snapshotDir(dir)).toEqual(before);
      const agentOnly = await crux(dir, ['--json', ...later, '--agent', 'bob', 'session', 'reap', '--dry-run']);
      expect(json(agentOnly)).toMatchObject({ reaped: ['old'], count: 1 });
      const reap = await crux(dir, ['--json', ...later, 'session', 'reap']);
      expect(reap.exitCode).toBe(0);
      const result = json(reap);
      expect(result).toMatchObject({ reaped: ['old', 'old', 'parked'], count: 3 });
      expect(result.sessions.map((s: any) => [s.agent, s.session_id, s.outcome])).toEqual([
        ['bob', 'old', 'expired'],
        [null, 'old', 'expired'],
        [null, 'parked', 'expired'],
      ]);
      const closes = journalLines(dir).filter((r) => r.ev === 'session.closed');
      expect(closes).toHaveLength(3);
      expect(new Set(closes.map((r) => r.seq - closes[0].seq))).toEqual(new Set([0, 1, 2]));
      const again = await crux(dir, ['--json', ...later, 'session', 'reap']);
      expect(again.exitCode).toBe(0);
      expect(json(again)).toMatchObject({ reaped: [], count: 0 });
      expect((await crux(dir, [...later, '--quiet', 'session', 'reap'])).stdout).toBe('');
      expect((await crux(dir, [...later, 'session', 'reap'])).stdout).toBe('nothing to reap\n');
    });

    it('uses CRUX_NOW, and reaps nothing (exit 0) in a data directory that does not exist, creating nothing', async () => {
      const dir = freshDataDir();
      await crux(dir, [...at(NOW), 'session', 'put', 'a', '{}', '--ttl', '90s']);
      expect(json(await crux(dir, ['--json', 'session', 'reap'], { env: { CRUX_NOW: '2026-03-01T12:01:29Z' } })).count).toBe(0);
      expect(json(await crux(dir, ['--json', 'session', 'reap'], { env: { CRUX_NOW: '2026-03-01T12:01:30Z' } })).reaped).toEqual(['a']);
      const none = freshDataDir();
      const run = await crux(none, ['--json', 'session', 'reap']);
      expect(run).toMatchObject({ exitCode: 0 });
      expect(json(run).count).toBe(0);
      expect(storeExists(none)).toBe(false);
    });
  });

  describe('scoping', () => {
    it('stores under __agent_session::<agent>::<id>; each agent sees only its own; list says how many are hidden', async () => {
      const dir = freshDataDir();
      await crux(dir, ['session', 'put', 'x', '"plain"']);
      await crux(dir, ['--agent', 'alice', 'session', 'put', 'x', '"alice"']);
      await crux(dir, ['session', 'put', 'x', '"bob"'], { env: { CRUX_AGENT: 'bob' } });
      await crux(dir, ['--agent', 'bob', 'session', 'put', 'y', '"bob-y"']);
      const ids = journalLines(dir).map((r) => r.data.id);
      expect(ids).toEqual(['x', '__agent_session::alice::x', '__agent_session::bob::x', '__agent_session::bob::y']);
      expect((await crux(dir, ['session', 'get', 'x'])).stdout).toBe('"plain"');
      expect((await crux(dir, ['--agent', 'alice', 'session', 'get', 'x'])).stdout).toBe('"alice"');
      expect((await crux(dir, ['--agent', 'alice', 'session', 'get', 'y'])).exitCode).toBe(3);
      expect((await crux(dir, ['session', 'get', 'y'])).exitCode).toBe(3);
      const plain = await crux(dir, ['--json', 'session', 'list']);
      expect(json(plain)).toMatchObject({ sessions: [{ session_id: 'x', agent: null }], hidden_scoped: 3 });
      const human = await crux(dir, ['session', 'ls']);
      expect(human.stdout).toContain('3 scoped sessions hidden (use --all-agents)');
      const bob = json(await crux(dir, ['--json', '--agent', 'bob', 'session', 'list']));
      expect(bob.sessions.map((s: any) => [s.agent, s.session_id]).sort()).toEqual([
        ['bob', 'x'],
        ['bob', 'y'],
      ]);
      const all = await crux(dir, ['session', 'list', '--all-agents']);
      expect(all.stdout).toMatch(/^id\tagent\tstatus\toutcome\tupdated\tfreshness\ttokens\texpires\tactor\n/);
      expect(all.stdout).not.toContain('hidden');
      expect(json(await crux(dir, ['--json', 'session', 'list', '--all-agents'])).sessions).toHaveLength(4);
      // Each scope closes its own.
      expect(json(await crux(dir, ['--json', '--agent', 'alice', 'session', 'close', 'x'])).outcome).toBe('closed');
      expect(json(await crux(dir, ['--json', '--agent', 'bob', 'session', 'close', 'x'])).outcome).toBe('closed');
      expect(json(await crux(dir, ['--json', 'session', 'get', 'x'])).session.status).toBe('active');
    });

    it('a get that names the wrong agent (or none) is 3 with a hint naming the scopes that hold the id', async () => {
      const dir = freshDataDir();
      await crux(dir, ['--agent', 'planner', 'session', 'put', 'plan-1', '{}']);
      await crux(dir, ['session', 'put', 'solo', '{}']);
      const none = await crux(dir, ['session', 'get', 'plan-1']);
      expect(none.exitCode).toBe(3);
      expect(none.stderr).toBe('crux: no session "plan-1" (it exists under agent "planner": use --agent planner)\n');
      await crux(dir, ['--agent', 'reviewer', 'session', 'put', 'plan-1', '{}']);
      await crux(dir, ['session', 'put', 'plan-1x', '{}']);
      const err = json({ stdout: (await crux(dir, ['--json', '--agent', 'x', 'session', 'get', 'plan-1'])).stderr });
      expect(err.error).toMatchObject({ code: 3, kind: 'not_found', message: 'no session "plan-1" of agent "x"' });
      expect(err.error.hint).toBe('it exists under agents "planner", "reviewer": use --agent <name>');
      expect((await crux(dir, ['--agent', 'planner', 'session', 'get', 'solo'])).stderr).toBe(
        'crux: no session "solo" of agent "planner" (it exists without an agent: leave --agent out)\n',
      );
      // An id no scope holds keeps the general hint; the store is left as it was.
      const before = snapshotDir(dir);
      expect((await crux(dir, ['session', 'get', 'plan-2'])).stderr).toBe('crux: no session "plan-2" (see `crux session list`)\n');
      expect(snapshotDir(dir)).toEqual(before);
    });
  });

  describe('freshness and stranded', () => {
    it('judges freshness against --now, configurable thresholds (none for a closed session); --stranded lists stale ones neither closed nor archived', async () => {
      const dir = freshDataDir();
      await crux(dir, [...at('2026-03-01T11:50:00Z'), 'session', 'put', 'fresh', '{}']);
      await crux(dir, [...at('2026-03-01T06:00:00Z'), 'session', 'put', 'aging', '{}']);
      await crux(dir, [...at('2026-02-20T00:00:00Z'), 'session', 'put', 'stale', '{}']);
      await crux(dir, [...at('2026-02-20T00:00:00Z'), 'session', 'put', 'closed', '{}']);
      await crux(dir, [...at('2026-02-20T00:00:00Z'), 'session', 'close', 'closed']);
      await crux(dir, [...at('2026-02-20T00:00:00Z'), 'session', 'put', 'parked', '{}']);
      await crux(dir, [...at('2026-02-20T00:00:00Z'), 'session', 'archive', 'parked']);
      await crux(dir, [...at('2026-03-01T13:00:00Z'), 'session', 'put', 'future', '{}']);
      const list = json(await crux(dir, ['--json', ...at(NOW), 'session', 'list', '--all']));
      const by = Object.fromEntries(list.sessions.map((s: any) => [s.session_id, s.freshness]));
      expect(by).toEqual({ fresh: 'fresh', aging: 'aging', stale: 'stale', closed: null, parked: 'stale', future: 'invalid' });
      const stranded = json(await crux(dir, ['--json', ...at(NOW), 'session', 'list', '--stranded']));
      expect(stranded.sessions.map((s: any) => s.session_id)).toEqual(['stale']);
      const tight = json(await crux(dir, ['--json', ...at(NOW), 'session', 'list', '--stranded', '--fresh-for', '1m', '--stale-after', '5h']));
      expect(tight.sessions.map((s: any) => s.session_id)).toEqual(['aging', 'stale']);
      const env = json(await crux(dir, ['--json', ...at(NOW), 'session', 'list'], { env: { CRUX_FRESH_FOR: '5m', CRUX_STALE_AFTER: '400d' } }));
      expect(Object.fromEntries(env.sessions.map((s: any) => [s.session_id, s.freshness]))).toMatchObject({ fresh: 'aging', stale: 'aging' });
      const human = await crux(dir, [...at(NOW), 'session', 'list', '--stranded']);
      expect(human.stdout).toContain('stale');
      expect(human.stdout).toMatch(/^id\tstatus\toutcome\tupdated\tfreshness\t/);
    });

    it('lists nothing (exit 0) for a data directory that does not exist, and creates nothing', async () => {
      const dir = freshDataDir();
      const run = await crux(dir, ['--json', 'session', 'list', '--all-agents']);
      expect(run.exitCode).toBe(0);
      expect(json(run)).toMatchObject({ sessions: [] });
      expect((await crux(dir, ['session', 'list'])).stdout).toBe('no sessions\n');
      expect(storeExists(dir)).toBe(false);
    });
  });
});

describe('session machine', () => {
  it('prints the machine as data (--json) and as a table', async () => {
    const run = await crux(freshDataDir(), ['--json', 'session', 'machine']);
    const m = json(run);
    expect(m.states).toEqual([
      { name: 'active', terminal: false },
      { name: 'archived', terminal: false },
      { name: 'handed_off', terminal: false },
      { name: 'closed', terminal: true },
    ]);
    expect(m.transitions).toContainEqual({ from: 'active', op: 'close', to: 'closed' });
    expect(m.transitions).toContainEqual({ from: 'archived', op: 'unarchive', to: 'active' });
    expect(m.transitions.filter((t: any) => t.from === 'closed')).toEqual([]);
    expect(m.terminal).toBe('closed');
    const table = await crux(freshDataDir(), ['session', 'machine']);
    expect(table.stdout).toContain('closed (terminal)');
    expect(table.stdout).toContain('→ handed_off');
    // Piped, COLUMNS is ignored: a tab-separated table, its closing sentences one line each (a terminal wraps them).
    const narrow = await crux(freshDataDir(), ['session', 'machine'], { env: { COLUMNS: '40' } });
    expect(narrow.stdout.split('\n')[0]).toMatch(/^from\tput\t/);
    expect(narrow.stdout).toMatch(/\na new session starts active, created by: .*\(any other op on a missing session: not found, 3\)\n/);
    expect(narrow.stdout.replace(/\s+/g, ' ')).toContain('(any other op on a missing session: not found, 3)');
  });
});
