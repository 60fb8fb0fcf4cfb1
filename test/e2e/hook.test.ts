// `crux hook claude-code` and `crux hook install claude-code`, with payloads shaped as Claude Code's hooks reference
// shows them (test/fixtures/claude-code/): create, enrich, touch, close; never 2. In-process (run-cli.ts), but for a
// lock held by another process and the installed entries, which a shell runs through the built binary.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux as spawned, freshDataDir, hookCommand, snapshotDir, tempDir, testEnv } from '../helpers/cli';
import { crux, runCli } from '../helpers/run-cli';

const FIXTURES = resolve(__dirname, '../fixtures/claude-code');
const fixture = (name: string, patch: Record<string, unknown> = {}) =>
  JSON.stringify({ ...JSON.parse(fs.readFileSync(join(FIXTURES, `${name}.json`), 'utf8')), ...patch });
const SID = JSON.parse(fs.readFileSync(join(FIXTURES, 'stop.json'), 'utf8')).session_id as string;
const T0 = '2026-12-01T09:00:00.000Z';
const T1 = '2026-12-01T09:05:00.000Z';

const hook = (dir: string, payload: string, opts: { now?: string; args?: string[]; env?: Record<string, string>; run?: typeof crux } = {}) =>
  (opts.run ?? crux)(dir, ['--now', opts.now ?? T0, 'hook', 'claude-code', ...(opts.args ?? [])], { input: payload, env: opts.env });
const session = async (dir: string, id = SID, agent = 'claude-code') => {
  const run = await crux(dir, ['--now', T1, '--agent', agent, '--json', 'session', 'get', id]);
  return run.exitCode === 0 ? JSON.parse(run.stdout).session : undefined;
};
const records = (dir: string) =>
  fs.existsSync(join(dir, 'sessions.jsonl'))
    ? fs
        .readFileSync(join(dir, 'sessions.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
const ok = (run: { exitCode: number; stdout: string; stderr: string }) => {
  expect(run.stderr).toBe('');
  expect(run.exitCode).toBe(0);
};
const refusedWith = (run: { exitCode: number; stderr: string }, code: number) => {
  expect(run.exitCode).toBe(code);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(/^crux: /);
};

describe('crux hook claude-code: events', () => {
  it('SessionStart creates the session (agent claude-code, 24h) and a resume or compact only touches it', async () => {
    const dir = freshDataDir();
    const start = await hook(dir, fixture('session-start-startup'));
    ok(start);
    expect(JSON.parse(start.stdout).hookSpecificOutput.additionalContext).toContain(SID);
    const created = await session(dir);
    expect(created).toMatchObject({ session_id: SID, agent: 'claude-code', status: 'active', updated_at: T0, expires_at: '2026-12-02T09:00:00.000Z' });
    expect(created.state).toEqual({
      cwd: '/home/dev/shop',
      transcript_path: `/home/dev/.claude/projects/-home-dev-shop/${SID}.jsonl`,
      source: 'startup',
      project: 'shop',
    });
    for (const [source, now] of [
      ['resume', '2026-12-01T09:01:00.000Z'],
      ['compact', '2026-12-01T09:02:00.000Z'],
    ] as const) {
      ok(await hook(dir, fixture(`session-start-${source}`), { now }));
      const touched = await session(dir);
      expect(touched).toMatchObject({ updated_at: now, created_at: T0, expires_at: '2026-12-02T09:00:00.000Z' });
      expect(touched.state.source).toBe('startup');
    }
    expect(records(dir).map((r) => r.ev)).toEqual(['session.put', 'session.touched', 'session.touched']);
  });

  it('Stop, SubagentStop, PreCompact (manual, auto) and Notification touch the session and print nothing', async () => {
    const dir = freshDataDir();
    ok(await hook(dir, fixture('session-start-startup')));
    const events = ['stop', 'subagent-stop', 'pre-compact-manual', 'pre-compact-auto', 'notification'];
    for (const [i, name] of events.entries()) {
      const now = `2026-12-01T10:0${i}:00.000Z`;
      const run = await hook(dir, fixture(name), { now });
      ok(run);
      expect(run.stdout, name).toBe('');
      expect((await session(dir)).updated_at, name).toBe(now);
    }
    expect(records(dir).filter((r) => r.ev === 'session.touched')).toHaveLength(events.length);
    // A hook installed mid-session sees no SessionStart: the first event creates the session.
    const late = freshDataDir();
    ok(await hook(late, fixture('stop')));
    expect((await session(late)).state).toEqual({ cwd: '/home/dev/shop', transcript_path: expect.any(String), source: null, project: 'shop' });
  });

  it('UserPromptSubmit adds the successful cases most similar to the prompt, and nothing when none clears the bar', async () => {
    const dir = freshDataDir();
    ok(await hook(dir, fixture('session-start-startup')));
    const none = await hook(dir, fixture('user-prompt-submit'), { now: T1 });
    ok(none);
    expect(none.stdout).toBe('');
    expect((await session(dir)).updated_at).toBe(T1);
    const record = (task: string, extra: string[] = []) =>
      crux(dir, ['case', 'record', '--task', task, '--action', `did ${task}`, '--outcome', 'worked', ...extra]);
    await record('calculate the factorial of a number recursively');
    await record('write a function to calculate the factorial of a number', ['--failure']);
    await record('calculate a number');
    await record('deploy the web service');
    const run = await hook(dir, fixture('user-prompt-submit'));
    ok(run);
    const out = JSON.parse(run.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    const context: string = out.hookSpecificOutput.additionalContext;
    expect(context).toContain('task: calculate the factorial of a number recursively');
    expect(context).toContain('action: did calculate the factorial of a number recursively');
    expect(context).toContain('outcome: worked');
    expect(context).not.toContain('write a function'); // a failure
    expect(context).not.toContain('deploy'); // no overlap
    expect(context.indexOf('factorial of a number recursively')).toBeLessThan(context.indexOf('task: calculate a number'));
    const top1 = JSON.parse((await hook(dir, fixture('user-prompt-submit'), { args: ['--top-k', '1'] })).stdout).hookSpecificOutput.additionalContext;
    expect(top1).not.toContain('task: calculate a number');
    expect((await hook(dir, fixture('user-prompt-submit'), { args: ['--min-similarity', '0.9'] })).stdout).toBe('');
  });

  it('SessionEnd closes exactly once, with the outcome its reason maps to', async () => {
    const dir = freshDataDir();
    for (const [reason, outcome] of [
      ['clear', 'completed'],
      ['logout', 'completed'],
      ['prompt_input_exit', 'completed'],
      ['other', 'abandoned'],
    ]) {
      const id = `end-${reason}`;
      ok(await hook(dir, fixture('session-start-startup', { session_id: id })));
      ok(await hook(dir, fixture(`session-end-${reason}`, { session_id: id }), { now: T1 }));
      expect(await session(dir, id), reason).toMatchObject({
        status: 'closed',
        outcome,
        closed_at: T1,
        summary: `Claude Code session ended (reason: ${reason})`,
      });
      // A second SessionEnd and a late Stop change nothing.
      ok(await hook(dir, fixture(`session-end-${reason}`, { session_id: id })));
      ok(await hook(dir, fixture('stop', { session_id: id })));
    }
    expect(records(dir).filter((r) => r.ev === 'session.closed')).toHaveLength(4);
    expect(records(dir).filter((r) => r.ev === 'session.touched')).toHaveLength(0);
  });

  it('SessionEnd after the reaper closed the session: exit 0, the one close record stands', async () => {
    const dir = freshDataDir();
    ok(await hook(dir, fixture('session-start-startup'), { args: ['--ttl', '1h'] }));
    const reap = await crux(dir, ['--now', '2026-12-01T11:00:00.000Z', '--json', 'session', 'reap']);
    expect(JSON.parse(reap.stdout).reaped).toEqual([SID]);
    const before = snapshotDir(dir);
    const end = await hook(dir, fixture('session-end-prompt_input_exit'), { now: '2026-12-01T11:30:00.000Z' });
    ok(end);
    expect(end.stdout).toBe('');
    expect(snapshotDir(dir)).toEqual(before);
    expect(await session(dir)).toMatchObject({ status: 'closed', outcome: 'expired' });
    expect(records(dir).filter((r) => r.ev === 'session.closed')).toHaveLength(1);
    // A SessionEnd for a session crux never saw (hooks installed mid-session) is nothing to close.
    ok(await hook(dir, fixture('session-end-other', { session_id: 'never-seen' })));
    expect(snapshotDir(dir)).toEqual(before);
  });

  it('passes over events it does not act on (exit 0, nothing written), and scopes to --agent / CRUX_AGENT', async () => {
    const dir = freshDataDir();
    const tool = await hook(dir, fixture('pre-tool-use'));
    ok(tool);
    expect(tool.stdout).toBe('');
    ok(await hook(dir, fixture('stop', { hook_event_name: 'SomeFutureEvent', session_id: 42 })));
    expect(fs.existsSync(dir)).toBe(false);
    ok(await crux(dir, ['--agent', 'reviewer', 'hook', 'claude-code'], { input: fixture('session-start-startup') }));
    ok(await hook(dir, fixture('session-start-startup'), { env: { CRUX_AGENT: 'planner' } }));
    expect(await session(dir, SID, 'reviewer')).toBeDefined();
    expect(await session(dir, SID, 'planner')).toBeDefined();
    expect(await session(dir, SID, 'claude-code')).toBeUndefined();
  });
});

describe('crux hook claude-code: refusals never exit 2', () => {
  it('a bad payload is exit 5 with one stderr line and writes nothing', async () => {
    const dir = freshDataDir();
    const bad = [
      'not json at all',
      '',
      '[1,2]',
      '{"session_id":"s"}',
      fixture('session-start-startup', { session_id: undefined }),
      fixture('session-start-startup', { session_id: 'a::b' }),
      fixture('session-start-startup', { session_id: '' }),
      '{"hook_event_name":"Stop","session_id":"s","prompt":"https://user:secret@example.com/x"',
    ];
    for (const payload of bad) {
      const run = await hook(dir, payload);
      refusedWith(run, 5);
      expect(run.stderr).not.toContain('secret');
      expect(run.stdout).toBe('');
    }
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('usage errors of the hook (an unknown option, a bad value) are 5, not 2', async () => {
    const dir = freshDataDir();
    refusedWith(await hook(dir, fixture('stop'), { args: ['--bogus'] }), 5);
    refusedWith(await hook(dir, fixture('stop'), { args: ['--ttl'] }), 5);
    refusedWith(await hook(dir, fixture('stop'), { args: ['--ttl', 'forever'] }), 5);
    refusedWith(await hook(dir, fixture('stop'), { args: ['--top-k', 'many'] }), 5);
    refusedWith(await hook(dir, fixture('stop'), { args: ['extra'] }), 5);
    expect(fs.existsSync(dir)).toBe(false);
    // Not a hook: install's usage errors stay 2.
    expect((await crux(dir, ['hook', 'install', 'claude-code', '--bogus'])).exitCode).toBe(2);
  });

  it('a lock held past CRUX_LOCK_TIMEOUT is exit 75 with one stderr line', async () => {
    const dir = freshDataDir();
    await crux(dir, ['session', 'put', 'x', '1']);
    const holder = crux(dir, ['session', 'put', 'holder', '{}'], { env: { CRUX_TEST_LOCK_HOLD_MS: '2500' } });
    await new Promise((r) => setTimeout(r, 600));
    // Two processes: the hook starts as late after the holder as a process does (on a loaded machine, after 600 ms).
    const run = await hook(dir, fixture('session-start-startup'), { env: { CRUX_LOCK_TIMEOUT: '300ms' }, run: spawned });
    refusedWith(run, 75);
    expect((await holder).exitCode).toBe(0);
    expect(await session(dir)).toBeUndefined();
  });
});

describe('crux hook install claude-code', () => {
  const OTHER = {
    model: 'claude-opus-4-1',
    permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(./.env)'] },
    env: { FOO: 'bar' },
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit-bash.sh', timeout: 5 }] }],
      SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'cat .claude/context.md' }] }],
    },
  };
  // In-process (run-cli names the program's script bin/crux, as a spawned crux is started): the entries written are
  // run by a shell below.
  // run by a shell below. A HOME of its own: in-process, a command's environment is the one it is given.
  const install = (cwd: string, args: string[] = [], env: Record<string, string> = {}, globals: string[] = []) =>
    runCli([...globals, 'hook', 'install', 'claude-code', ...args], { cwd, env: { HOME: tempDir(), ...env } });

  it('merges into the project settings, keeping every other setting and hook; a second install changes nothing', async () => {
    const cwd = tempDir();
    const path = join(cwd, '.claude', 'settings.json');
    fs.mkdirSync(join(cwd, '.claude'));
    fs.writeFileSync(path, JSON.stringify(OTHER, null, 4));
    fs.chmodSync(path, 0o600);
    const first = await install(cwd);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain(path);
    const merged = JSON.parse(fs.readFileSync(path, 'utf8'));
    expect(merged.model).toBe(OTHER.model);
    expect(merged.permissions).toEqual(OTHER.permissions);
    expect(merged.env).toEqual(OTHER.env);
    expect(merged.hooks.PreToolUse).toEqual(OTHER.hooks.PreToolUse);
    expect(merged.hooks.SessionStart).toEqual([...OTHER.hooks.SessionStart, { hooks: [{ type: 'command', command: hookCommand('hook claude-code') }] }]);
    for (const event of ['UserPromptSubmit', 'Stop', 'SubagentStop', 'PreCompact', 'Notification', 'SessionEnd']) {
      expect(merged.hooks[event], event).toEqual([{ hooks: [{ type: 'command', command: hookCommand('hook claude-code') }] }]);
    }
    expect(fs.statSync(path).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(join(cwd, '.claude'))).toEqual(['settings.json']);

    const bytes = fs.readFileSync(path);
    const mtime = fs.statSync(path).mtimeMs;
    const second = await install(cwd, ['--json']);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ settings: path, changed: false, events: [] });
    expect(fs.readFileSync(path)).toEqual(bytes);
    expect(fs.statSync(path).mtimeMs).toBe(mtime);
  });

  it('creates the file, updates an older crux entry in place, honours --settings, --user and --print', async () => {
    const cwd = tempDir();
    expect((await install(cwd)).exitCode).toBe(0);
    expect(Object.keys(JSON.parse(fs.readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8')).hooks)).toHaveLength(7);

    const custom = join(tempDir(), 'settings.local.json');
    fs.writeFileSync(
      custom,
      JSON.stringify({
        hooks: {
          Stop: [
            {
              hooks: [
                { type: 'command', command: 'crux --agent old hook claude-code' },
                { type: 'command', command: 'notify-send done' },
              ],
            },
          ],
        },
      }),
    );
    const dataDir = join(tempDir(), 'shared data');
    const run = await install(cwd, ['--settings', custom], {}, ['--agent', 'reviewer', '--data-dir', dataDir]);
    expect(run.exitCode).toBe(0);
    const command = hookCommand(`--data-dir '${dataDir}' --agent reviewer hook claude-code`);
    expect(JSON.parse(fs.readFileSync(custom, 'utf8')).hooks.Stop).toEqual([
      {
        hooks: [
          { type: 'command', command },
          { type: 'command', command: 'notify-send done' },
        ],
      },
    ]);

    const home = tempDir();
    const printed = await install(cwd, ['--user', '--print'], { HOME: home });
    expect(printed.exitCode).toBe(0);
    expect(JSON.parse(printed.stdout).hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: hookCommand('hook claude-code') }] }]);
    expect(fs.existsSync(join(home, '.claude'))).toBe(false);
    expect((await install(cwd, ['--user'], { HOME: home })).exitCode).toBe(0);
    expect(fs.existsSync(join(home, '.claude', 'settings.json'))).toBe(true);
  });

  it('refuses a settings file that is not a JSON object (5) and bad usage (2), writing nothing', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'broken.json');
    for (const text of ['{"model": "x",', '[1]', '{"hooks": []}', '{"hooks": {"Stop": {}}}']) {
      fs.writeFileSync(path, text);
      const run = await install(cwd, ['--settings', path]);
      expect(run.exitCode, text).toBe(5);
      expect(fs.readFileSync(path, 'utf8')).toBe(text);
    }
    expect((await install(cwd, ['--settings', path, '--user'])).exitCode).toBe(2);
    expect((await runCli(['hook', 'install', 'cursor'], { cwd, env: { HOME: tempDir() } })).exitCode).toBe(2);
  });

  it('installs a command that works where crux is not on PATH: each installed hook, run by a shell as Claude Code runs it', async () => {
    const cwd = tempDir();
    const dataDir = join(tempDir(), 'data');
    expect((await install(cwd, [], {}, ['--data-dir', dataDir])).exitCode).toBe(0);
    const hooks = JSON.parse(fs.readFileSync(join(cwd, '.claude', 'settings.json'), 'utf8')).hooks;
    // The agent's PATH has neither crux nor node: the entry names both by absolute path.
    const empty = tempDir();
    const env = testEnv({ PATH: empty });
    const runHook = (event: string, payload: string) =>
      execa('/bin/sh', ['-c', hooks[event][0].hooks[0].command], { input: payload, reject: false, env, extendEnv: false });
    expect((await runHook('SessionStart', fixture('session-start-startup'))).exitCode).toBe(0);
    expect((await runHook('SessionEnd', fixture('session-end-logout'))).exitCode).toBe(0);
    const closed = JSON.parse((await crux(dataDir, ['--agent', 'claude-code', '--json', 'session', 'get', SID])).stdout).session;
    expect(closed).toMatchObject({ status: 'closed', outcome: 'completed' });
  });
});

describe('crux hook gemini-cli', () => {
  const GEMINI = resolve(__dirname, '../fixtures/gemini-cli');
  const gemini = (name: string, patch: Record<string, unknown> = {}) =>
    JSON.stringify({ ...JSON.parse(fs.readFileSync(join(GEMINI, `${name}.json`), 'utf8')), ...patch });
  const GID = JSON.parse(fs.readFileSync(join(GEMINI, 'before-agent.json'), 'utf8')).session_id as string;
  const run = (dir: string, payload: string, now = T0) => crux(dir, ['--now', now, 'hook', 'gemini-cli'], { input: payload });

  it("follows a Gemini CLI session: SessionStart, BeforeAgent's context, AfterAgent, PreCompress, Notification, SessionEnd", async () => {
    const dir = freshDataDir();
    ok(await run(dir, gemini('session-start-startup')));
    expect(await session(dir, GID, 'gemini-cli')).toMatchObject({ status: 'active', agent: 'gemini-cli', state: { cwd: '/home/dev/shop', source: 'startup' } });
    ok(await run(dir, gemini('session-start-resume'), '2026-12-01T09:00:30.000Z'));
    await crux(dir, ['case', 'record', '--task', 'calculate the factorial of a number recursively', '--action', 'wrote fact()', '--outcome', 'tests pass']);
    const prompt = await run(dir, gemini('before-agent'), '2026-12-01T09:01:00.000Z');
    ok(prompt);
    const out = JSON.parse(prompt.stdout).hookSpecificOutput;
    expect(out.hookEventName).toBe('BeforeAgent');
    expect(out.additionalContext).toContain('action: wrote fact()');
    for (const [name, now] of [
      ['after-agent', '2026-12-01T09:02:00.000Z'],
      ['pre-compress-auto', '2026-12-01T09:03:00.000Z'],
      ['notification', '2026-12-01T09:04:00.000Z'],
    ] as const) {
      const r = await run(dir, gemini(name), now);
      ok(r);
      expect(r.stdout).toBe('');
      expect((await session(dir, GID, 'gemini-cli')).updated_at, name).toBe(now);
    }
    const before = snapshotDir(dir);
    ok(await run(dir, gemini('before-tool')));
    expect(snapshotDir(dir)).toEqual(before);
    ok(await run(dir, gemini('session-end-exit'), '2026-12-01T09:05:00.000Z'));
    expect(await session(dir, GID, 'gemini-cli')).toMatchObject({ status: 'closed', outcome: 'completed', summary: 'Gemini CLI session ended (reason: exit)' });
    ok(await run(dir, gemini('session-end-other', { session_id: 'other-one' })));
    ok(await run(dir, gemini('session-start-startup', { session_id: 'other-one' })));
    ok(await run(dir, gemini('session-end-other', { session_id: 'other-one' })));
    expect(await session(dir, 'other-one', 'gemini-cli')).toMatchObject({ status: 'closed', outcome: 'abandoned' });
    refusedWith(await run(dir, '{"hook_event_name":"BeforeAgent"}'), 5);
  });

  it('installs into .gemini/settings.json with named handlers, beside the Claude Code ones and every other setting', async () => {
    const cwd = tempDir();
    fs.mkdirSync(join(cwd, '.gemini'));
    fs.writeFileSync(
      join(cwd, '.gemini', 'settings.json'),
      JSON.stringify({
        theme: 'GitHub',
        hooks: { BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ name: 'audit', type: 'command', command: 'audit.sh' }] }] },
      }),
    );
    const first = await runCli(['hook', 'install', 'gemini-cli'], { cwd, env: { HOME: tempDir() } });
    expect(first.exitCode).toBe(0);
    const settings = JSON.parse(fs.readFileSync(join(cwd, '.gemini', 'settings.json'), 'utf8'));
    expect(settings.theme).toBe('GitHub');
    expect(settings.hooks.BeforeTool).toEqual([{ matcher: 'run_shell_command', hooks: [{ name: 'audit', type: 'command', command: 'audit.sh' }] }]);
    expect(Object.keys(settings.hooks).sort()).toEqual([
      'AfterAgent',
      'BeforeAgent',
      'BeforeTool',
      'Notification',
      'PreCompress',
      'SessionEnd',
      'SessionStart',
    ]);
    expect(settings.hooks.BeforeAgent).toEqual([{ hooks: [{ name: 'crux', type: 'command', command: hookCommand('hook gemini-cli') }] }]);
    const bytes = fs.readFileSync(join(cwd, '.gemini', 'settings.json'));
    expect((await runCli(['hook', 'install', 'gemini-cli'], { cwd, env: { HOME: tempDir() } })).stdout).toContain('nothing changed');
    expect(fs.readFileSync(join(cwd, '.gemini', 'settings.json'))).toEqual(bytes);
    expect(fs.existsSync(join(cwd, '.claude'))).toBe(false);
  });
});
