// `crux mcp`'s browsing tools through the SDK's own Client (SPEC §10.1): session_history, case_list, case_show,
// handoff_list — each structuredContent equal to the CLI's --json, warnings included over a damaged journal —
// and the text a model acts on (each case's action and outcome, the versions of a history), refusals whose
// hints name tools and arguments.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { expectRefusal, serverPool, withoutStateText } from '../helpers/mcp';

const NOW = '2026-12-01T10:00:00.000Z';
const pool = serverPool(['--now', NOW]);
afterEach(pool.closeAll);

const cli = (dir: string, args: string[]) => crux(dir, ['--now', NOW, ...args]);
const cliJson = async (dir: string, args: string[]) => JSON.parse((await cli(dir, ['--json', ...args])).stdout);
/** A refusal's words must be a model's: tools and arguments, never a flag or a shell command. */
const inToolTerms = (error: { message: string; hint: string }) => {
  for (const text of [error.message, error.hint]) {
    expect(text).not.toMatch(/(^|[\s(])--[a-z]/);
    expect(text).not.toMatch(/`crux /);
  }
};

describe('crux mcp: session_history', () => {
  it('lists every version newest first, as `session history --json`, with the seq that session_get.at takes', async () => {
    const dir = freshDataDir();
    const s = await pool.start(dir, 'planner');
    await s.call('session_put', { session_id: 'job', state_text: '{"v": 1}' });
    expect((await cli(dir, ['--agent', 'planner', 'session', 'put', 'job', '{"v": 2}'])).exitCode).toBe(0);
    await s.call('session_archive', { session_id: 'job', reason: 'paused' });
    const history = await s.call('session_history', { session_id: 'job' });
    expect(history.isError).toBeFalsy();
    expect(history.structuredContent).toEqual(await cliJson(dir, ['--agent', 'planner', 'session', 'history', 'job']));
    const versions = history.structuredContent.history;
    expect(versions.map((v: any) => v.ev)).toEqual(['session.archived', 'session.put', 'session.put']);
    // The text names every version's seq, and how to read one.
    const text: string = history.content[0].text;
    for (const v of versions) expect(text).toMatch(new RegExp(`^${v.seq}\\s+\\S+\\s+${v.ev.replace('.', '\\.')}`, 'm'));
    expect(text).toContain('session_get with at');
    // The seq of the first put reads that version back, byte for byte.
    const first = versions.at(-1).seq;
    const then = await s.call('session_get', { session_id: 'job', at: first });
    expect(then.content[0].text).toBe('{"v": 1}');
    expect(then.structuredContent.session.state_text).toBe('{"v": 1}');
    expect((await s.call('session_history', { session_id: 'job', limit: 1 })).structuredContent.history).toEqual(versions.slice(0, 1));
    expect((await s.call('session_history', { session_id: 'job', limit: 0 })).structuredContent.history).toEqual(versions);
    // Another agent's session of the same name is not this one's.
    const other = await pool.start(dir, 'builder');
    const missing = expectRefusal(await other.call('session_history', { session_id: 'job' }), 3);
    expect(missing.hint).toContain('call session_list with all: true');
    inToolTerms(missing);
  });
});

describe('crux mcp: case_list, case_show, case_retrieve text', () => {
  it('lists and shows cases as `case list/show --json`, filtered as the CLI filters', async () => {
    const dir = freshDataDir();
    const s = await pool.start(dir, 'planner');
    const a = (
      await s.call('case_record', {
        task: 'rotate the TLS certificate',
        action: 'certbot renew --force',
        outcome: 'renewed, nginx reloaded',
        tags: ['tls', 'prod'],
      })
    ).structuredContent.case;
    const b = (
      await cli(dir, [
        'case',
        'record',
        '--task',
        'deploy web',
        '--action',
        'kubectl apply -f web.yaml',
        '--outcome',
        'crash loop',
        '--failure',
        '--tag',
        'prod',
      ])
    ).stdout.trim();
    await s.call('case_record', { task: 'write the changelog', action: 'git log --oneline', outcome: 'written', context: 'release 1.2\nsecond line' });

    const all = await s.call('case_list');
    expect(all.structuredContent).toEqual(await cliJson(dir, ['case', 'list']));
    expect(all.structuredContent.cases).toHaveLength(3);
    // The text gives each case's action and outcome in full (a table would cut them).
    for (const c of all.structuredContent.cases) {
      expect(all.content[0].text).toContain(`action: ${c.action}`);
      expect(all.content[0].text).toContain(`outcome: ${c.outcome}`);
    }
    expect(all.content[0].text).toContain('context: release 1.2\n     second line');
    expect((await s.call('case_list', { only_failure: true })).structuredContent).toEqual(await cliJson(dir, ['case', 'list', '--only-failure']));
    expect((await s.call('case_list', { only_success: true })).structuredContent.cases).toHaveLength(2);
    expect((await s.call('case_list', { tag: 'prod' })).structuredContent).toEqual(await cliJson(dir, ['case', 'list', '--tag', 'prod']));
    expect((await s.call('case_list', { tag: ['prod', 'tls'] })).structuredContent.cases.map((c: any) => c.case_id)).toEqual([a.case_id]);
    expect((await s.call('case_list', { limit: 2 })).structuredContent).toEqual(await cliJson(dir, ['case', 'list', '--limit', '2']));
    // Arguments the model must correct are a refusal it reads (SEP-1303), not a protocol error.
    expect((await s.call('case_list', { only_success: true, only_failure: true })).structuredContent.error).toMatchObject({
      code: 5,
      message: 'invalid arguments for case_list: give only_success or only_failure, not both',
    });

    const shown = await s.call('case_show', { case_id: b });
    expect(shown.structuredContent).toEqual(await cliJson(dir, ['case', 'show', b]));
    expect(shown.content[0].text).toMatch(/^action: +kubectl apply -f web\.yaml$/m);
    const missing = expectRefusal(await s.call('case_show', { case_id: 'c_00000000000000000000000000' }), 3);
    expect(missing.hint).toContain('call case_list');
    inToolTerms(missing);
  });

  it("case_retrieve's text gives each match's action and outcome, best first", async () => {
    const dir = freshDataDir();
    const s = await pool.start(dir, 'planner');
    await s.call('case_record', { task: 'fix the flaky login test', action: 'pinned the clock with --now', outcome: 'green 50 runs in a row' });
    await s.call('case_record', { task: 'fix the login page', action: 'escaped the redirect URL', outcome: 'failed: still open', success: false });
    const found = await s.call('case_retrieve', { task: 'fix flaky login test' });
    expect(found.structuredContent).toEqual(await cliJson(dir, ['case', 'retrieve', 'fix', 'flaky', 'login', 'test']));
    const text: string = found.content[0].text;
    expect(text).toContain('action: pinned the clock with --now');
    expect(text).toContain('outcome: green 50 runs in a row');
    expect(text).toContain('action: escaped the redirect URL');
    expect(text.indexOf('pinned the clock')).toBeLessThan(text.indexOf('escaped the redirect'));
    expect(text).toMatch(/similarity 0\.800, succeeded/);
    expect(text).toMatch(/similarity 0\.\d+, failed/);
    expect((await s.call('case_retrieve', { task: 'nothing alike' })).content[0].text).toBe('no matching cases');
  });
});

describe('crux mcp: handoff_list', () => {
  it('lists minted and accepted packages as `handoff list --json`, by status', async () => {
    const dir = freshDataDir();
    const planner = await pool.start(dir, 'planner');
    const builder = await pool.start(dir, 'builder');
    expect((await planner.call('handoff_list')).structuredContent).toEqual({ handoffs: [], keys: [] });
    await planner.call('session_put', { session_id: 'one', state: 1 });
    await planner.call('session_put', { session_id: 'two', state: 2 });
    const first = await planner.call('create_handoff', { session_id: 'one', target_agent: 'builder' });
    await planner.call('create_handoff', { session_id: 'two' });
    await builder.call('accept_handoff', { handoff: first.content[0].text });

    const all = await builder.call('handoff_list');
    expect(all.structuredContent).toEqual(await cliJson(dir, ['handoff', 'list']));
    // Both minted at one --now: their order is the store's; what each one is, is not.
    expect(all.structuredContent.handoffs.map((h: any) => [h.session_id, h.status]).sort()).toEqual([
      ['one', 'accepted'],
      ['two', 'outstanding'],
    ]);
    expect(all.content[0].text).toMatch(/outstanding/);
    const accepted = await planner.call('handoff_list', { status: 'accepted' });
    expect(accepted.structuredContent).toEqual(await cliJson(dir, ['handoff', 'list', '--status', 'accepted']));
    expect((await planner.call('handoff_list', { status: ['outstanding', 'expired'] })).structuredContent.handoffs.map((h: any) => h.session_id)).toEqual([
      'two',
    ]);
    expect((await planner.call('handoff_list', { limit: 1 })).structuredContent.handoffs).toHaveLength(1);
    const lost = await planner.call('handoff_list', { status: 'lost' });
    expect(lost.isError).toBe(true);
    expect(lost.structuredContent.error).toMatchObject({ code: 5, kind: 'invalid_input' });
    expect(lost.structuredContent.error.message).toMatch(/^invalid arguments for handoff_list: argument status: [^\n]+$/);
  });
});

describe('crux mcp over a damaged journal', () => {
  it('carries the warnings of the CLI --json document, and says them in the text', async () => {
    const dir = freshDataDir();
    for (const id of ['a', 'b', 'c']) await cli(dir, ['--agent', 'planner', 'session', 'put', id, `{"id":"${id}"}`]);
    await cli(dir, ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']);
    const s = await pool.start(dir, 'planner');
    expect((await s.call('session_list')).structuredContent).not.toHaveProperty('warnings');
    const path = join(dir, 'sessions.jsonl');
    const lines = fs.readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('\\"id\\":\\"b\\"', '\\"id\\":\\"B\\"');
    fs.writeFileSync(path, lines.join('\n'));
    const warning = { file: 'sessions.jsonl', line: 2, reason: 'hash mismatch' };

    const list = await s.call('session_list', { all: true });
    expect(list.structuredContent).toEqual(await cliJson(dir, ['--agent', 'planner', 'session', 'list', '--all']));
    expect(list.structuredContent.warnings).toEqual([warning]);
    expect(list.content[0].text).toContain('warning: sessions.jsonl:2: hash mismatch');
    const get = await s.call('session_get', { session_id: 'a' });
    expect(withoutStateText(get.structuredContent)).toEqual(await cliJson(dir, ['--agent', 'planner', 'session', 'get', 'a']));
    expect(get.structuredContent.warnings).toEqual([warning]);
    // The text of session_get is the state's bytes and nothing else.
    expect(get.content[0].text).toBe('{"id":"a"}');
    expect((await s.call('session_history', { session_id: 'c' })).structuredContent.warnings).toEqual([warning]);
    // A store the damage does not touch reports none, and each call reports only its own replay's.
    expect((await s.call('case_list')).structuredContent).not.toHaveProperty('warnings');
    expect((await s.call('session_list')).structuredContent.warnings).toEqual([warning]);
  });
});

describe('crux mcp: refusals in tool terms', () => {
  it('names tools and arguments in every hint and message, never a flag or a shell command', async () => {
    const dir = freshDataDir();
    const planner = await pool.start(dir, 'planner');
    const intruder = await pool.start(dir, 'intruder');
    const refusals: [any, number, RegExp?][] = [];
    const add = async (result: Promise<any>, code: number, hint?: RegExp) => refusals.push([await result, code, hint]);
    await add(planner.call('session_get', { session_id: 'nope' }), 3, /call session_list/);
    await planner.call('session_put', { session_id: 'job', state: { plan: [] }, tokens: 5 });
    await add(planner.call('session_put', { session_id: 'job', state: 1, tokens: 11, max_tokens: 10 }), 5, /argument max_tokens/);
    await add(planner.call('session_unarchive', { session_id: 'job' }), 4, /allows: session_put, session_archive, create_handoff/);
    await add(planner.call('session_get', { session_id: 'job', at: 'yesterday' }), 5);
    await add(planner.call('session_get', { session_id: 'job', at: '0' }), 5);
    await add(planner.call('case_retrieve', { task: 'x', min_similarity: 2 }), 5);
    await add(planner.call('session_put', { session_id: 'ttl', state: 1, ttl: 'soon' }), 5);
    await add(planner.call('accept_handoff', { handoff: '{"payload_b64":"x"}' }), 5, /create_handoff/);
    // A version of a session that is not kept: the tool that lists the versions kept.
    await add(planner.call('session_get', { session_id: 'nope', at: 3 }), 3, /^session_history lists the versions kept$/);
    // Arguments that fail the schema: a refusal too, naming the argument and the tool that describes them.
    await add(planner.call('session_get', { session_id: 'job', at: true }), 5, /tools\/list describes what each argument accepts/);
    const minted = await planner.call('create_handoff', { session_id: 'job', target_agent: 'builder' });
    await add(intruder.call('accept_handoff', { handoff: minted.content[0].text }), 6, /only the agent it is addressed to/);
    await add(planner.call('create_handoff', { session_id: 'job', alg: 'ed25519' }), 3, /leave alg out/);
    await planner.call('session_close', { session_id: 'job' });
    await add(planner.call('session_put', { session_id: 'job', state: 1 }), 4, /only an operator can delete it/);
    const builder = await pool.start(dir, 'builder');
    await builder.call('accept_handoff', { handoff: minted.content[0].text });
    await add(builder.call('accept_handoff', { handoff: minted.content[0].text }), 8, /handoff_list shows it/);

    for (const [result, code, hint] of refusals) {
      const error = expectRefusal(result, code);
      inToolTerms(error);
      if (hint !== undefined) expect(error.hint).toMatch(hint);
    }
    // Arguments are named as the tools name them, in the message too.
    const at = refusals[3]![0].structuredContent.error.message;
    expect(at).toMatch(/^at is not an RFC 3339 time/);
    expect(refusals[5]![0].structuredContent.error.message).toMatch(/^min_similarity must be/);
  }, 30_000);
});
