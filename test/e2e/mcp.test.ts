// `crux mcp` through the SDK's own Client over stdio, against the built binary (SPEC §10.1): every tool, the
// same documents and bytes as the CLI, handoffs between two servers, racing closes, malformed arguments.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { serversClosedAfterEach, SPEC_TOOLS, withoutStateText } from '../helpers/mcp';

const NOW = '2026-12-01T10:00:00.000Z';
const server = serversClosedAfterEach(NOW);

const cli = (dir: string, args: string[], input?: string) => crux(dir, ['--now', NOW, ...args], input === undefined ? {} : { input });
const protocolError = async (p: Promise<unknown>) => {
  const error: any = await p.then(
    () => undefined,
    (e) => e,
  );
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

describe('crux mcp: tools', () => {
  it('lists the tools of SPEC §10.1 with described arguments and output schemas', async () => {
    const s = await server(freshDataDir(), 'planner');
    const { tools } = await s.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(SPEC_TOOLS);
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

  // The SDK's Server makes an Ajv for JSON Schemas unless given a validator (~5 ms of every start): crux gives its own,
  // and the SDK's bundle (dist/mcp.cjs, which this server ran from) carries no Ajv.
  it('starts without Ajv: dist/mcp.cjs carries none', () => {
    const sdk = fs.readFileSync(join(__dirname, '../../dist/mcp.cjs'), 'utf8');
    expect(sdk).not.toContain('ajv implementation error');
    expect(sdk).not.toContain('ajv-validator');
    expect(sdk).toContain('crux mcp carries no Ajv');
  });

  it('runs every session tool with structuredContent equal to the CLI --json document', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    const put = await s.call('session_put', { session_id: 'build-42', state: { step: 3, files: ['a.ts'] }, ttl: '2h', tokens: 10, add_tokens: 5 });
    expect(put.isError).toBeFalsy();
    expect(put.structuredContent.session).toMatchObject({
      session_id: 'build-42',
      agent: 'planner',
      status: 'active',
      total_tokens: 15,
      expires_at: '2026-12-01T12:00:00.000Z',
    });
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
    const states = [
      '{"n":12345678901234567890,"x":1.0,"e":1e400}',
      '{"b":1,"a":2,"b2":[]}',
      '  {"pad" : "é\\u00e9 \u{1F600}"}\n',
      '"just a string"',
      'null',
      '[1,2.50,-0]',
    ];
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
      task: 'rotate the TLS certificate',
      action: 'certbot renew',
      outcome: 'renewed',
      tags: ['tls'],
      reward: 0.8,
      context: 'prod https://u:p@h.example/x',
    });
    expect(recorded.structuredContent.case).toMatchObject({
      task: 'rotate the TLS certificate',
      reward: 0.8,
      success: true,
      tags: ['tls'],
      context: 'prod https://h.example/x',
    });
    const id = recorded.structuredContent.case.case_id;
    const found = JSON.parse((await cli(dir, ['--json', 'case', 'retrieve', 'renew', 'tls', 'certificate'])).stdout);
    expect(found.results.map((r: any) => r.case.case_id)).toEqual([id]);

    const cliRecorded = await cli(dir, [
      'case',
      'record',
      '--task',
      'deploy the web service',
      '--action',
      'kubectl apply',
      '--outcome',
      'rolled out',
      '--failure',
    ]);
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
    const minted = await planner.call('create_handoff', {
      session_id: 'job',
      target_agent: 'builder',
      message: 'tests green',
      task_record: { requester: 'ops', acceptance_criteria: ['ci passes'] },
    });
    expect(minted.isError).toBeFalsy();
    const envelopeText: string = minted.content[0].text;
    expect(JSON.parse(envelopeText)).toEqual(minted.structuredContent);
    expect(Object.keys(minted.structuredContent)).toEqual(['payload_b64', 'content_hash', 'signature_b64', 'signature_alg']);
    expect((await planner.call('session_get', { session_id: 'job' })).structuredContent.session.status).toBe('handed_off');
    // A third agent may not take a package addressed to the builder.
    const other = await server(dir, 'intruder');
    refusal(await other.call('accept_handoff', { handoff: envelopeText }), 6);

    const accepted = await builder.call('accept_handoff', { handoff: envelopeText });
    expect(accepted.structuredContent.accepted).toMatchObject({
      session_id: 'job',
      agent: 'builder',
      content_hash: minted.structuredContent.content_hash,
      facts: 0,
    });
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

  it('refuses arguments that fail the schema as a one-line refusal naming the argument (code 5), an unknown tool as a protocol error, and keeps serving', async () => {
    const dir = freshDataDir();
    const s = await server(dir, 'planner');
    /** The refusal's message (MCP 2025-11-25, SEP-1303: the model reads it and corrects the call). */
    const invalid = async (name: string, args: Record<string, unknown>) => {
      const result = await s.call(name, args);
      refusal(result, 5);
      const { message, kind } = result.structuredContent.error;
      expect(kind).toBe('invalid_input');
      expect(message).not.toContain('\n');
      expect(result.content[0].text).not.toContain('\n');
      return message as string;
    };
    expect(await invalid('session_get', {})).toBe('invalid arguments for session_get: argument session_id is missing');
    expect(await invalid('session_get', { session_id: 42 })).toBe('invalid arguments for session_get: argument session_id: expected string, received number');
    expect(await invalid('session_get', { session_id: 'x', sessionId: 'x' })).toBe('invalid arguments for session_get: unknown argument sessionId');
    expect(await invalid('session_put', { session_id: 'x' })).toContain('state');
    expect(await invalid('session_put', { session_id: 'x', state: 1, state_text: '1' })).toContain('exactly one');
    expect(await invalid('session_put', { session_id: 'x', state: 1, tokens: -1 })).toMatch(/^invalid arguments for session_put: argument tokens: /);
    expect(await invalid('session_close', { session_id: 'x', outcome: 'expired' })).toMatch(/^invalid arguments for session_close: argument outcome: /);
    expect(await invalid('case_retrieve', { task: 'x', top_k: '3' })).toMatch(/^invalid arguments for case_retrieve: argument top_k: /);
    expect(await invalid('accept_handoff', { handoff: 7 })).toMatch(/^invalid arguments for accept_handoff: argument handoff: /);
    expect(await protocolError(s.call('no_such_tool', {}))).toContain('no_such_tool');
    expect(fs.existsSync(dir)).toBe(false);
    expect((await s.call('session_put', { session_id: 'x', state: 1 })).isError).toBeFalsy();
  });
});
