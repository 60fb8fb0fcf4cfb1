// `crux hook claude-code` as the model meets it, through the built binary with payloads and transcripts shaped
// as Claude Code sends and writes them (test/fixtures/claude-code/): SessionStart names the crux session and
// offers the project's cases; --record-cases turns a transcript's stretch into one scrubbed case, once.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux as spawned, describeEachStore, freshDataDir, freshStore, journalLines, snapshotDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';

const FIXTURES = resolve(__dirname, '../fixtures/claude-code');
const read = (name: string) => fs.readFileSync(join(FIXTURES, name), 'utf8');
const payload = (name: string, patch: Record<string, unknown> = {}) => JSON.stringify({ ...JSON.parse(read(`${name}.json`)), ...patch });
const SID = JSON.parse(read('stop.json')).session_id as string;
const T0 = '2026-12-01T09:00:00.000Z';
const SECRET = 'ghp_s3cr3tT0ken';

const hook = (dir: string, body: string, args: string[] = [], env: Record<string, string> = {}) =>
  crux(dir, ['--now', T0, 'hook', 'claude-code', ...args], { input: body, env });
const record = (dir: string, body: string, env: Record<string, string> = {}) => hook(dir, body, ['--record-cases'], env);
const cases = async (dir: string) => JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases;
const context = (run: { stdout: string }) => JSON.parse(run.stdout).hookSpecificOutput.additionalContext as string;
const ok = (run: { exitCode: number; stderr: string }) => {
  expect(run.stderr).toBe('');
  expect(run.exitCode).toBe(0);
};
/** A transcript file of its own (the fixture's lines, or the first `lines` of them) and its path. */
function transcript(name: string, lines?: number): string {
  const path = join(tempDir(), `${SID}.jsonl`);
  const text = read(`transcript-${name}.jsonl`);
  fs.writeFileSync(path, lines === undefined ? text : `${text.split('\n').slice(0, lines).join('\n')}\n`);
  return path;
}

describe('SessionStart: the model learns its crux session', () => {
  it('answers additionalContext naming the session, its agent and the MCP tools; the state names the project', async () => {
    const dir = freshDataDir();
    const run = await hook(dir, payload('session-start-startup'));
    ok(run);
    const out = JSON.parse(run.stdout);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out.hookSpecificOutput.additionalContext).toBe(
      `crux: this Claude Code session is crux session "${SID}" of agent "claude-code" (project shop).\n` +
        `Its crux MCP tools reach it: call session_get with session_id "${SID}" to read its state, session_put to save it, case_retrieve for what worked before.`,
    );
    const agent = await hook(dir, payload('session-start-clear', { session_id: 'other' }), [], { CRUX_AGENT: 'planner' });
    expect(context(agent)).toContain('crux session "other" of agent "planner"');
    // A session Claude Code resumes after its SessionEnd stays closed, and the model is told so.
    ok(await hook(dir, payload('session-end-logout')));
    expect(context(await hook(dir, payload('session-start-resume')))).toContain(
      'It was closed when it ended before; its crux MCP tools still read it (session_get with session_id',
    );
    const state = JSON.parse((await crux(dir, ['--agent', 'claude-code', 'session', 'get', SID])).stdout);
    expect(state).toEqual({ cwd: '/home/dev/shop', transcript_path: expect.any(String), source: 'startup', project: 'shop' });
  });

  it("the project is the git repository's root directory the cwd is in, else the cwd's own name", async () => {
    const dir = freshDataDir();
    const repo = join(tempDir(), 'acme-shop');
    fs.mkdirSync(join(repo, '.git'), { recursive: true });
    fs.mkdirSync(join(repo, 'packages', 'web'), { recursive: true });
    ok(await hook(dir, payload('session-start-startup', { session_id: 'in-repo', cwd: join(repo, 'packages', 'web') })));
    const worktree = join(tempDir(), 'shop-wt');
    fs.mkdirSync(join(worktree, 'src'), { recursive: true });
    fs.writeFileSync(join(worktree, '.git'), 'gitdir: /elsewhere/.git/worktrees/shop-wt\n');
    ok(await hook(dir, payload('session-start-startup', { session_id: 'in-worktree', cwd: join(worktree, 'src') })));
    const projectOf = async (id: string) => JSON.parse((await crux(dir, ['--agent', 'claude-code', 'session', 'get', id])).stdout).project;
    expect(await projectOf('in-repo')).toBe('acme-shop');
    expect(await projectOf('in-worktree')).toBe('shop-wt');
  });

  it("a resumed session is offered this project's successful cases most like its transcript's last prompt", async () => {
    const dir = freshDataDir();
    const add = (task: string, tag: string, extra: string[] = []) =>
      crux(dir, ['case', 'record', '--task', task, '--action', `did: ${task}`, '--outcome', 'worked', '--tag', tag, ...extra]);
    await add('benchmark the iterative factorial', 'shop');
    await add('benchmark the iterative factorial against recursion', 'other-project');
    await add('benchmark the recursive factorial', 'shop', ['--failure']);
    await add('deploy to staging', 'shop');
    const resume = payload('session-start-resume', { transcript_path: transcript('compacted') });
    const run = await hook(dir, resume);
    ok(run);
    const text = context(run);
    expect(text).toContain(`crux session "${SID}"`);
    expect(text).toContain(
      'crux: cases that worked before in project shop, similar to what this session resumes\n1. task: benchmark the iterative factorial\n   action: did: benchmark the iterative factorial',
    );
    expect(text).not.toContain('against recursion');
    expect(text).not.toContain('recursive');
    expect(text).not.toContain('staging');
    expect(text).not.toContain('2. task');
    // Nothing clears a higher bar, a startup resumes nothing, an unreadable transcript offers nothing: the session line only.
    for (const run of [
      await hook(dir, resume, ['--min-similarity', '0.9']),
      await hook(dir, payload('session-start-startup', { transcript_path: transcript('compacted') })),
      await hook(dir, payload('session-start-compact', { transcript_path: join(tempDir(), 'gone.jsonl') })),
    ]) {
      ok(run);
      expect(context(run)).not.toContain('cases that worked before');
    }
  });
});

describe('--record-cases: cases that record themselves', () => {
  it('Stop records the stretch a newer prompt closed; the last turn waits for SessionEnd and its reason', async () => {
    const dir = freshDataDir();
    const path = transcript('two-prompts', 18); // the first prompt's turn, up to its Stop
    const stop = payload('stop', { transcript_path: path });
    ok(await record(dir, stop));
    expect(fs.existsSync(join(dir, 'cases.jsonl'))).toBe(false);
    fs.writeFileSync(path, read('transcript-two-prompts.jsonl')); // the second prompt's turn, up to its Stop
    ok(await record(dir, stop));
    ok(await record(dir, stop));
    const [first, ...none] = await cases(dir);
    expect(none).toEqual([]);
    expect(first.task).toBe('The factorial tests fail for n = 0: fix factorial and push to https://github.com/acme/shop.git');
    expect(first.outcome).toMatch(/^Claude Code session went on to a new prompt; 5 tool results, 1 error; last command `git commit/);
    ok(await record(dir, payload('session-end-logout', { transcript_path: path })));
    const second = (await cases(dir)).find((c: { case_id: string }) => c.case_id !== first.case_id);
    expect(second).toMatchObject({
      task: 'Also add a test for negative numbers',
      action: 'tools: Bash ×1, MultiEdit ×1, Task ×1, Write ×1\ncommands: npm test -- factorial\nfiles changed: test/factorial.test.js; CHANGELOG.md',
      outcome: expect.stringMatching(/^Claude Code session ended \(reason: logout\); 4 tool results, 0 errors; last command `npm test -- factorial` succeeded/),
      success: true,
    });
    const before = snapshotDir(dir);
    ok(await record(dir, stop));
    ok(await record(dir, payload('session-end-logout', { transcript_path: path })));
    expect(snapshotDir(dir)).toEqual(before);
    // Without --record-cases nothing is recorded.
    const plain = freshDataDir();
    ok(await hook(plain, payload('session-end-logout', { transcript_path: path })));
    expect(fs.existsSync(join(plain, 'cases.jsonl'))).toBe(false);
  });

  it('a missing, torn, damaged, oversized or absent transcript: exit 0, one stderr line, no case; the session still closes', async () => {
    const whole = read('transcript-two-prompts.jsonl');
    const torn = join(tempDir(), 'torn.jsonl');
    fs.writeFileSync(torn, whole.slice(0, whole.length - 40));
    const damaged = join(tempDir(), 'damaged.jsonl');
    fs.writeFileSync(damaged, whole.replace('\n', '\n{"type":"user","mess\n'));
    const fifo = join(tempDir(), 'fifo');
    execFileSync('mkfifo', [fifo]);
    const tries: [string, Record<string, unknown>, RegExp, Record<string, string>?][] = [
      ['missing', { transcript_path: join(tempDir(), 'nope.jsonl') }, /^crux: no case recorded: no transcript at \/.*nope\.jsonl$/],
      ['torn', { transcript_path: torn }, /^crux: no case recorded: the transcript .*torn\.jsonl ends in a partial line \(line 32\)$/],
      ['damaged', { transcript_path: damaged }, /^crux: no case recorded: line 2 of the transcript .*damaged\.jsonl is not JSON$/],
      [
        'oversized',
        { transcript_path: transcript('two-prompts') },
        /^crux: no case recorded: the transcript .* is 21456 bytes, over the limit of 20000 \(CRUX_MAX_TRANSCRIPT_BYTES\)$/,
        { CRUX_MAX_TRANSCRIPT_BYTES: '20000' },
      ],
      ['a directory', { transcript_path: tempDir() }, /^crux: no case recorded: the transcript .* is not a file$/],
      ['a FIFO with no writer', { transcript_path: fifo }, /^crux: no case recorded: the transcript .*fifo is not a file$/],
      ['absent', { transcript_path: undefined }, /^crux: no case recorded: the Claude Code payload names no transcript_path$/],
    ];
    for (const [what, patch, message, env] of tries) {
      const dir = freshDataDir();
      ok(await hook(dir, payload('session-start-startup')));
      const run = await record(dir, payload('session-end-clear', patch), env);
      expect(run.exitCode, what).toBe(0);
      expect(run.stdout, what).toBe('');
      expect(run.stderr.split('\n'), what).toHaveLength(2);
      expect(run.stderr.trimEnd(), what).toMatch(message);
      expect(fs.existsSync(join(dir, 'cases.jsonl')), what).toBe(false);
      expect(JSON.parse((await crux(dir, ['--agent', 'claude-code', '--json', 'session', 'get', SID])).stdout).session.status, what).toBe('closed');
    }
  });
});

describe('--record-cases for a client whose transcripts crux does not read', () => {
  it('Gemini CLI: accepted (one installed command line for every event), records nothing and says so', async () => {
    const dir = freshDataDir();
    const gemini = (body: Record<string, unknown>) =>
      crux(dir, ['--now', T0, 'hook', 'gemini-cli', '--record-cases'], {
        input: JSON.stringify({ session_id: 'g1', cwd: '/home/dev/shop', transcript_path: transcript('two-prompts'), ...body }),
      });
    ok(await gemini({ hook_event_name: 'SessionStart', source: 'startup' }));
    ok(await gemini({ hook_event_name: 'AfterAgent' }));
    const end = await gemini({ hook_event_name: 'SessionEnd', reason: 'exit' });
    expect(end.exitCode).toBe(0);
    expect(end.stderr).toBe('crux: no case recorded: crux does not read Gemini CLI transcripts\n');
    expect(fs.existsSync(join(dir, 'cases.jsonl'))).toBe(false);
  });
});

describeEachStore('--record-cases over a %s store', (kind) => {
  it('SessionEnd records one scrubbed case that a later UserPromptSubmit offers; a second SessionEnd records nothing', async () => {
    const dir = freshStore(kind);
    const path = transcript('two-prompts');
    ok(await record(dir, payload('session-start-startup', { transcript_path: path })));
    ok(await record(dir, payload('session-end-prompt_input_exit', { transcript_path: path })));
    const [one, ...rest] = await cases(dir);
    expect(rest).toEqual([]);
    expect(one).toMatchObject({
      task: 'The factorial tests fail for n = 0: fix factorial and push to https://github.com/acme/shop.git\nAlso add a test for negative numbers',
      success: true,
      tags: ['shop'],
      context: `Claude Code session ${SID} in /home/dev/shop, 2 prompts`,
    });
    expect(one.action).toContain('tools: Bash ×4, Edit ×1, MultiEdit ×1, Read ×1, Task ×1, Write ×1');
    expect(one.action).toContain('git push https://github.com/acme/shop.git main');
    expect(one.outcome).toMatch(
      /^Claude Code session ended \(reason: prompt_input_exit\); 9 tool results, 1 error; last command `npm test -- factorial` succeeded/,
    );
    expect(journalLines(dir, 'cases.jsonl').join('\n')).not.toContain(SECRET);
    expect(JSON.parse((await crux(dir, ['--agent', 'claude-code', '--json', 'session', 'get', SID])).stdout).session).toMatchObject({
      status: 'closed',
      outcome: 'completed',
    });

    const before = snapshotDir(dir);
    ok(await record(dir, payload('session-end-prompt_input_exit', { transcript_path: path })));
    ok(await record(dir, payload('stop', { transcript_path: path })));
    expect(snapshotDir(dir)).toEqual(before);

    const next = await hook(dir, payload('user-prompt-submit', { session_id: 'next-session', prompt: 'the factorial tests fail again for n = 0' }));
    ok(next);
    expect(context(next)).toContain(`action: ${one.action.split('\n')[0]}`);
    expect(context(next)).toContain(`case ${one.case_id}`);
    // A recorded case the user deleted is not recorded again.
    ok(await crux(dir, ['case', 'delete', one.case_id, '--yes']));
    ok(await record(dir, payload('session-end-prompt_input_exit', { transcript_path: path })));
    expect(await cases(dir)).toEqual([]);
  });

  it('eight SessionEnds at once record one case', async () => {
    const dir = freshStore(kind);
    const end = payload('session-end-other', { transcript_path: transcript('interrupted') });
    ok(await hook(dir, payload('session-start-startup')));
    // Eight processes racing for the lock: spawned.
    const runs = await Promise.all(Array.from({ length: 8 }, () => spawned(dir, ['--now', T0, 'hook', 'claude-code', '--record-cases'], { input: end })));
    for (const run of runs) ok(run);
    const [one, ...rest] = await cases(dir);
    expect(rest).toEqual([]);
    expect(one).toMatchObject({ task: 'Deploy the shop to staging with ./deploy.sh staging', success: false });
  });
});
