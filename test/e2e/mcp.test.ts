// `crux mcp` through the SDK's own Client over stdio, against the built binary (SPEC §10.1): every tool, the
// same documents and bytes as the CLI, handoffs between two servers, racing closes, malformed arguments.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CRUX, crux, describeEachStore, freshDataDir, freshStore, storeArgs, tempDir, testEnv } from '../helpers/cli';
import { startMcp, withoutStateText, type McpSession } from '../helpers/mcp';

const NOW = '2026-12-01T10:00:00.000Z';
const TOOLS = [
  'session_put', 'session_get', 'session_list', 'session_archive', 'session_unarchive', 'session_close',
  'case_record', 'case_retrieve', 'create_handoff', 'accept_handoff',
  'session_history', 'case_list', 'case_show', 'handoff_list', 'journal_check',
];

const open: McpSession[] = [];
async function server(dir: string, agent: string | undefined, opts: Parameters<typeof startMcp>[2] = {}): Promise<McpSession> {
  const s = await startMcp(dir, agent === undefined ? [] : ['--agent', agent], { globals: ['--now', NOW], ...opts });
  open.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const cli = (dir: string, args: string[], input?: string) => crux(dir, ['--now', NOW, ...args], input === undefined ? {} : { input });
const protocolError = async (p: Promise<unknown>) => {
  const error: any = await p.then(() => undefined, (e) => e);
  expect(error, 'a protocol error').toBeDefined();
  expect(error.code).toBe(-32602);
  return String(error.message);
};
const refusal = (result: any, code: number) => {
  expect(result.isError).toBe(true);
  expect(result.structuredContent.error).toMatchObject({ code });
  expect(Object.keys(result.structuredContent.error)).toEqual(['code', 'kind', 'message', 'hint']);
  expect(result.content[0].text).toMatch(/^crux: .+ \(.+\)$/);
};
const journalLines = (dir: string, file: string) => fs.readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('crux mcp: tools', () => {
  it('lists the tools of SPEC §10.1 with described arguments and output schemas', async () => {
    const s = await server(freshDataDir(), 'planner');
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(30);
      expect(t.inputSchema.type).toBe('object');
      for (const [name, prop] of Object.entries(t.inputSchema.properties ?? {})) expect((prop as any).description, `${t.name}.${name}`).toBeTruthy();
      expect(t.outputSchema?.type).toBe('object');
    }
    const put = tools.find((t) => t.name === 'session_put')!;
    expect(Object.keys(put.inputSchema.properties!)).toEqual(expect.arrayContaining(['session_id', 'state', 'state_text', 'ttl', 'tokens', 'add_tokens']));
    expect(put.inputSchema.required).toEqual(['session_id']);
    expect(tools.find((t) => t.name === 'case_retrieve')!.inputSchema.required).toEqual(['task']);
    expect(tools.find((t) => t.name === 'accept_handoff')!.inputSchema.required).toEqual(['handoff']);
  });

  it('runs every session tool with structuredContent equal to the CLI --json document', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    const put = await s.call('session_put', { session_id: 'build-42', state: { step: 3, files: ['a.ts'] }, ttl: '2h', tokens: 10, add_tokens: 5 });
    expect(put.isError).toBeFalsy();
    expect(put.structuredContent.session).toMatchObject({ session_id: 'build-42', agent: 'planner', status: 'active', total_tokens: 15, expires_at: '2026-12-01T12:00:00.000Z' });
    expect(put.content[0].text).toContain('stored session build-42');

    const get = await s.call('session_get', { session_id: 'build-42' });
    expect(get.content[0].text).toBe('{"step":3,"files":["a.ts"]}');
    const cliGet = await cli(dir, ['--agent', 'planner', '--json', 'session', 'get', 'build-42']);
    expect(withoutStateText(get.structuredContent)).toEqual(JSON.parse(cliGet.stdout));
    expect(get.structuredContent.session.state_text).toBe('{"step":3,"files":["a.ts"]}');

    const list = await s.call('session_list');
    expect(list.structuredContent).toEqual(JSON.parse((await cli(dir, ['--agent', 'planner', '--json', 'session', 'list'])).stdout));
    expect(list.structuredContent.sessions.map((x: any) => x.session_id)).toEqual(['build-42']);

    const archived = await s.call('session_archive', { session_id: 'build-42', reason: 'see https://u:tok@example.com/x' });
    expect(archived.structuredContent.session).toMatchObject({ status: 'archived', archive_reason: 'see https://example.com/x' });
    expect((await s.call('session_list')).structuredContent.sessions).toEqual([]);
    expect((await s.call('session_list', { archived: true })).structuredContent.sessions).toHaveLength(1);
    const unarchived = await s.call('session_unarchive', { session_id: 'build-42' });
    expect(unarchived.structuredContent.session.status).toBe('active');

    const closed = await s.call('session_close', { session_id: 'build-42', outcome: 'failed', summary: 'tests red' });
    expect(closed.structuredContent).toMatchObject({ outcome: 'closed', session: { status: 'closed', outcome: 'failed', summary: 'tests red' } });
    const again = await s.call('session_close', { session_id: 'build-42' });
    const cliAgain = await cli(dir, ['--agent', 'planner', '--json', 'session', 'close', 'build-42']);
    expect(again.structuredContent).toEqual(JSON.parse(cliAgain.stdout));
    expect(again.structuredContent.outcome).toBe('already_closed');
    expect((await s.call('session_list', { all: true, limit: 1 })).structuredContent.sessions).toHaveLength(1);

    const check = await s.call('journal_check');
    const withoutTimes = (doc: any) => ({ ...doc, journals: doc.journals.map(({ replay_ms: _, ...j }: any) => j) });
    expect(withoutTimes(check.structuredContent)).toEqual(withoutTimes(JSON.parse((await cli(dir, ['--json', 'journal', 'check'])).stdout)));
    expect(check.structuredContent.healthy).toBe(true);
  });

  it('keeps state byte-for-byte both ways between MCP and the CLI', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    const states = ['{"n":12345678901234567890,"x":1.0,"e":1e400}', '{"b":1,"a":2,"b2":[]}', '  {"pad" : "é\\u00e9 \u{1F600}"}\n', '"just a string"', 'null', '[1,2.50,-0]'];
    for (const [i, state] of states.entries()) {
      await s.call('session_put', { session_id: `m${i}`, state_text: state });
      const viaCli = await cli(dir, ['--agent', 'planner', 'session', 'get', `m${i}`]);
      expect(Buffer.from(viaCli.stdout)).toEqual(Buffer.from(state));
      const file = join(tempDir(), 'state.json');
      fs.writeFileSync(file, state);
      expect((await cli(dir, ['--agent', 'planner', 'session', 'put', `c${i}`, '--file', file])).exitCode).toBe(0);
      expect((await s.call('session_get', { session_id: `c${i}` })).content[0].text).toBe(state);
    }
    // `at`: the state as it was at a record (seq) or a time, as `session get --at` answers.
    const first = (await cli(dir, ['--agent', 'planner', '--json', 'session', 'history', 'c0'])).stdout;
    const seq = JSON.parse(first).history.at(-1).seq;
    await s.call('session_put', { session_id: 'c0', state_text: '{"later":true}' });
    expect((await s.call('session_get', { session_id: 'c0', at: seq })).content[0].text).toBe(states[0]);
    expect((await s.call('session_get', { session_id: 'c0', at: NOW })).content[0].text).toBe('{"later":true}');
    const atCli = await cli(dir, ['--agent', 'planner', '--json', 'session', 'get', 'c0', '--at', String(seq)]);
    // The same document, as JSON carries it (1e400 parses to Infinity, which JSON writes as null).
    const atMcp = (await s.call('session_get', { session_id: 'c0', at: seq })).structuredContent;
    expect(withoutStateText(atMcp)).toEqual(JSON.parse(JSON.stringify(JSON.parse(atCli.stdout))));
    // What parsing cannot carry, state_text does: the exact bytes, 12345678901234567890 and 1e400 included.
    expect(atMcp.session.state_text).toBe(states[0]);
    expect(atMcp.session.state.e).toBeNull();
    refusal(await s.call('session_get', { session_id: 'c0', at: '2000-01-01T00:00:00Z' }), 3);
    refusal(await s.call('session_get', { session_id: 'c0', at: 'yesterday' }), 5);
    // A state near the 1 MiB limit travels whole both ways (each message one write).
    const big = JSON.stringify({ blob: 'é'.repeat(450_000) });
    expect((await s.call('session_put', { session_id: 'big', state_text: big })).isError).toBeFalsy();
    expect((await s.call('session_get', { session_id: 'big' })).content[0].text).toBe(big);
    // A JSON value (not text) is stored as its JSON text, null included.
    await s.call('session_put', { session_id: 'v', state: null });
    expect((await cli(dir, ['--agent', 'planner', 'session', 'get', 'v'])).stdout).toBe('null');
  });

  it('sees what another process changed between two calls (no state kept between calls)', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    await s.call('session_put', { session_id: 'shared', state: { v: 1 } });
    expect((await cli(dir, ['--agent', 'planner', 'session', 'put', 'shared', '{"v":2}'])).exitCode).toBe(0);
    expect((await s.call('session_get', { session_id: 'shared' })).content[0].text).toBe('{"v":2}');
    expect((await cli(dir, ['--agent', 'planner', 'session', 'close', 'shared'])).exitCode).toBe(0);
    refusal(await s.call('session_put', { session_id: 'shared', state: 3 }), 4);
  });

  it('records a case through one adapter and finds it through the other', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    const recorded = await s.call('case_record', {
      task: 'rotate the TLS certificate', action: 'certbot renew', outcome: 'renewed', tags: ['tls'], reward: 0.8, context: 'prod https://u:p@h.example/x',
    });
    expect(recorded.structuredContent.case).toMatchObject({ task: 'rotate the TLS certificate', reward: 0.8, success: true, tags: ['tls'], context: 'prod https://h.example/x' });
    const id = recorded.structuredContent.case.case_id;
    const found = JSON.parse((await cli(dir, ['--json', 'case', 'retrieve', 'renew', 'tls', 'certificate'])).stdout);
    expect(found.results.map((r: any) => r.case.case_id)).toEqual([id]);

    const cliRecorded = await cli(dir, ['case', 'record', '--task', 'deploy the web service', '--action', 'kubectl apply', '--outcome', 'rolled out', '--failure']);
    const cliId = cliRecorded.stdout.trim();
    const viaMcp = await s.call('case_retrieve', { task: 'deploy web service', top_k: 3 });
    expect(viaMcp.structuredContent).toEqual(JSON.parse((await cli(dir, ['--json', 'case', 'retrieve', 'deploy', 'web', 'service', '--top-k', '3'])).stdout));
    expect(viaMcp.structuredContent.results.map((r: any) => r.case.case_id)).toEqual([cliId]);
    expect((await s.call('case_retrieve', { task: 'deploy web service', only_success: true })).structuredContent.results).toEqual([]);
    expect((await s.call('case_retrieve', { task: 'deploy certificate', min_similarity: 0.9 })).structuredContent.results).toEqual([]);
    await s.call('case_retrieve', { task: 'tls certificate', mark_reused: true });
    expect(JSON.parse((await cli(dir, ['--json', 'case', 'show', id])).stdout).case.times_reused).toBe(1);
    refusal(await s.call('case_record', { task: ' ', action: 'a', outcome: 'o' }), 5);
  });

  it('mints over one server, accepts over another as a second agent, refuses the replay (8)', async () => {
    const dir = freshDataDir();
    const planner = await server(dir, 'planner');
    const builder = await server(dir, 'builder');
    const state = '{"plan":["a","b"],"big":12345678901234567890}';
    await planner.call('session_put', { session_id: 'job', state_text: state });
    const minted = await planner.call('create_handoff', { session_id: 'job', target_agent: 'builder', message: 'tests green', task_record: { requester: 'ops', acceptance_criteria: ['ci passes'] } });
    expect(minted.isError).toBeFalsy();
    const envelopeText: string = minted.content[0].text;
    expect(JSON.parse(envelopeText)).toEqual(minted.structuredContent);
    expect(Object.keys(minted.structuredContent)).toEqual(['payload_b64', 'content_hash', 'signature_b64', 'signature_alg']);
    expect((await planner.call('session_get', { session_id: 'job' })).structuredContent.session.status).toBe('handed_off');
    // A third agent may not take a package addressed to the builder.
    const other = await server(dir, 'intruder');
    refusal(await other.call('accept_handoff', { handoff: envelopeText }), 6);

    const accepted = await builder.call('accept_handoff', { handoff: envelopeText });
    expect(accepted.structuredContent.accepted).toMatchObject({ session_id: 'job', agent: 'builder', content_hash: minted.structuredContent.content_hash, facts: 0 });
    expect((await builder.call('session_get', { session_id: 'job' })).content[0].text).toBe(state);
    expect((await cli(dir, ['--agent', 'builder', 'session', 'get', 'job'])).stdout).toBe(state);
    // The replay, as a string and as an object, through MCP and through the CLI: 8 each time.
    refusal(await builder.call('accept_handoff', { handoff: envelopeText }), 8);
    refusal(await builder.call('accept_handoff', { handoff: JSON.parse(envelopeText) }), 8);
    expect((await cli(dir, ['handoff', 'accept', '-', '--as', 'builder'], envelopeText)).exitCode).toBe(8);

    // A package minted by the CLI is accepted over MCP, given as an object.
    await cli(dir, ['--agent', 'planner', 'session', 'put', 'job2', '{"k":1}']);
    const cliMint = await cli(dir, ['handoff', 'mint', 'job2', '--from', 'planner']);
    const second = await builder.call('accept_handoff', { handoff: JSON.parse(cliMint.stdout) });
    expect(second.structuredContent.accepted).toMatchObject({ session_id: 'job2', agent: 'builder' });
    refusal(await builder.call('accept_handoff', { handoff: '{"payload_b64":"x"}' }), 5);
  });

  it('answers refusals as isError results with the error table codes', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    refusal(await s.call('session_get', { session_id: 'missing' }), 3);
    refusal(await s.call('session_put', { session_id: 'a::b', state: 1 }), 5);
    refusal(await s.call('session_put', { session_id: 'bad', state_text: '{"unclosed":' }), 5);
    const small = await server(dir, 'planner', { env: { CRUX_MAX_STATE_BYTES: '8' } });
    refusal(await small.call('session_put', { session_id: 'big', state: 'more than eight bytes' }), 5);
    refusal(await s.call('session_put', { session_id: 'ttl', state: 1, ttl: 'soon' }), 5);
    refusal(await s.call('session_unarchive', { session_id: 'missing' }), 3);
    await s.call('session_put', { session_id: 'a', state: 1 });
    refusal(await s.call('session_unarchive', { session_id: 'a' }), 4);
    refusal(await s.call('session_put', { session_id: 'a', state: 1, tokens: 11, max_tokens: 10 }), 5);
    // The handoff tools need the server's agent identity: a usage refusal (2) that names the fix.
    const anonymous = await server(dir, undefined);
    const noAgent = await anonymous.call('create_handoff', { session_id: 'a' });
    refusal(noAgent, 2);
    expect(noAgent.structuredContent.error.hint).toContain('CRUX_AGENT');
  }, 30_000);

  it('refuses malformed arguments and unknown tools as protocol errors, and keeps serving', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    expect(await protocolError(s.call('session_get', {}))).toContain('session_id');
    expect(await protocolError(s.call('session_get', { session_id: 42 }))).toContain('session_id');
    expect(await protocolError(s.call('session_get', { session_id: 'x', sessionId: 'x' }))).toContain('sessionId');
    expect(await protocolError(s.call('session_put', { session_id: 'x' }))).toContain('state');
    expect(await protocolError(s.call('session_put', { session_id: 'x', state: 1, state_text: '1' }))).toContain('exactly one');
    expect(await protocolError(s.call('session_put', { session_id: 'x', state: 1, tokens: -1 }))).toContain('tokens');
    expect(await protocolError(s.call('session_close', { session_id: 'x', outcome: 'expired' }))).toContain('outcome');
    expect(await protocolError(s.call('case_retrieve', { task: 'x', top_k: '3' }))).toContain('top_k');
    expect(await protocolError(s.call('accept_handoff', { handoff: 7 }))).toContain('handoff');
    expect(await protocolError(s.call('no_such_tool', {}))).toContain('no_such_tool');
    expect(fs.existsSync(dir)).toBe(false);
    expect((await s.call('session_put', { session_id: 'x', state: 1 })).isError).toBeFalsy();
  });
});

describe('crux mcp: sharing a data directory', () => {
  it('4 MCP servers and 4 CLI processes closing one session at once write exactly one close record', async () => {
    const dir = freshDataDir();
    expect((await cli(dir, ['--agent', 'planner', 'session', 'put', 'race', '{}'])).exitCode).toBe(0);
    const servers = await Promise.all([0, 1, 2, 3].map(() => server(dir, 'planner')));
    const [viaMcp, viaCli] = await Promise.all([
      Promise.all(servers.map((s) => s.call('session_close', { session_id: 'race', summary: 'mcp' }))),
      Promise.all([0, 1, 2, 3].map(() => cli(dir, ['--agent', 'planner', '--json', 'session', 'close', 'race', '--summary', 'cli']))),
    ]);
    const outcomes = [...viaMcp.map((r) => r.structuredContent.outcome), ...viaCli.map((r) => JSON.parse(r.stdout).outcome)];
    expect(outcomes.filter((o) => o === 'closed')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'already_closed')).toHaveLength(7);
    expect(journalLines(dir, 'sessions.jsonl').filter((r) => r.ev === 'session.closed')).toHaveLength(1);
    expect(JSON.parse((await cli(dir, ['--json', 'journal', 'check'])).stdout).healthy).toBe(true);
  }, 60_000);

  it('many tool calls at once from one client (a model calling tools in parallel) lose and duplicate nothing', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    await s.call('session_put', { session_id: 'shared', state: 0 });
    const calls = [
      ...Array.from({ length: 24 }, (_, i) => s.call('session_put', { session_id: `p${i}`, state_text: `{"i":${i}}`, add_tokens: 1 })),
      ...Array.from({ length: 8 }, (_, i) => s.call('case_record', { task: `parallel task ${i}`, action: 'a', outcome: 'o' })),
      ...Array.from({ length: 6 }, () => s.call('session_close', { session_id: 'shared' })),
      ...Array.from({ length: 6 }, () => s.call('session_list')),
    ];
    const results = await Promise.all(calls);
    expect(results.filter((r) => r.isError)).toEqual([]);
    const closes = results.slice(32, 38).map((r) => r.structuredContent.outcome);
    expect(closes.filter((o) => o === 'closed')).toHaveLength(1);
    for (let i = 0; i < 24; i++) expect((await cli(dir, ['--agent', 'planner', 'session', 'get', `p${i}`])).stdout).toBe(`{"i":${i}}`);
    const lines = journalLines(dir, 'sessions.jsonl');
    expect(lines.filter((r) => r.ev === 'session.closed')).toHaveLength(1);
    expect(lines.filter((r) => r.ev === 'session.put')).toHaveLength(25);
    expect(journalLines(dir, 'cases.jsonl').filter((r) => r.ev === 'case.recorded')).toHaveLength(8);
    expect(JSON.parse((await cli(dir, ['--json', 'journal', 'check'])).stdout).healthy).toBe(true);
  }, 60_000);

  it('answers other requests while a write waits for the lock, and refuses the write with 75 past CRUX_LOCK_TIMEOUT', async () => {
    const dir = freshDataDir();
    await cli(dir, ['session', 'put', 'held', '{"v":1}']);
    const s = await server(dir, undefined, { env: { CRUX_LOCK_TIMEOUT: '1s' } });
    // A CLI writer that sits inside the lock for 4 s.
    const holder = crux(dir, ['session', 'put', 'holder', '{}'], { env: { CRUX_TEST_LOCK_HOLD_MS: '4000' } });
    await new Promise((resolve) => setTimeout(resolve, 700));
    const started = performance.now();
    const write = s.call('session_put', { session_id: 'waits', state: 1 });
    const read = await s.call('session_get', { session_id: 'held' });
    const readMs = performance.now() - started;
    expect(read.content[0].text).toBe('{"v":1}');
    expect(readMs).toBeLessThan(900);
    refusal(await write, 75);
    const waitedMs = performance.now() - started;
    expect(waitedMs).toBeGreaterThan(900);
    expect(waitedMs).toBeLessThan(3000);
    expect((await holder).exitCode).toBe(0);
    expect((await s.call('session_put', { session_id: 'waits', state: 1 })).isError).toBeFalsy();
  }, 30_000);

  it('writes nothing but protocol to stdout, survives a garbage line, and exits 0 when stdin closes', async () => {
    const dir = freshDataDir();
    const child = spawn(CRUX, ['--data-dir', dir, 'mcp', '--agent', 'planner'], { env: testEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    child.stderr.on('data', (c) => (stderr += String(c)));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    child.stdin.write('this is not json\n');
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'session_put', arguments: { session_id: 'raw', state_text: '{"a":1}' } } });
    // Calls run concurrently (a read never waits for a write): the get goes once the put has answered.
    const answered = async (id: number) => {
      for (let i = 0; i < 100 && !stdout.includes(`"id":${id}`); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await answered(2);
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'session_get', arguments: { session_id: 'raw' } } });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await answered(3);
    // A call still in flight when input ends is finished (and its write made) before the server exits.
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'session_put', arguments: { session_id: 'last', state: 1 } } });
    child.stdin.end();
    const started = performance.now();
    expect(await exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(2000);
    const messages = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(messages.find((m) => m.id === 3).result.content[0].text).toBe('{"a":1}');
    expect(stderr).not.toContain('at ');
    expect((await cli(dir, ['--agent', 'planner', 'session', 'get', 'last'])).stdout).toBe('1');
  });

  it('refuses a bad identity before serving (exit 5), and documents itself in --help', async () => {
    const bad = await crux(freshDataDir(), ['mcp', '--agent', 'a::b']);
    expect(bad.exitCode).toBe(5);
    expect(bad.stdout).toBe('');
    const help = await crux(freshDataDir(), ['mcp', '--help']);
    for (const name of TOOLS) expect(help.stdout).toContain(name);
  });
});

describeEachStore('crux mcp on a %s store, its input ended at once', (kind) => {
  it('answers every request it read before stdin ended (`printf … | crux mcp`), and makes every write', async () => {
    const store = freshStore(kind);
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      ...Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'session_put', arguments: { session_id: `p${i}`, state: i } } })),
      { jsonrpc: '2.0', id: 20, method: 'tools/list' },
      { jsonrpc: '2.0', id: 21, method: 'no/such/method' },
      { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'case_record', arguments: { task: 'piped in', action: 'a', outcome: 'o' } } },
    ];
    const child = spawn(CRUX, [...storeArgs(store), 'mcp', '--agent', 'piper'], { env: testEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += String(c)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // All of it in one write, then end: as a shell pipe delivers it.
    child.stdin.end(lines.map((m) => `${JSON.stringify(m)}\n`).join(''));
    expect(await exited).toBe(0);
    const ids = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line).id).sort((a, b) => a - b);
    expect(ids).toEqual([1, 10, 11, 12, 13, 14, 15, 20, 21, 22]);
    if (process.env.DEBUG_MCP) console.log(stdout);
    for (let i = 0; i < 6; i++) expect((await crux(store, ['--agent', 'piper', 'session', 'get', `p${i}`])).stdout).toBe(String(i));
  }, 30_000);
});
