// `crux mcp` at the protocol's edge, spoken to line by line: every line answered (-32700 for what does not
// parse, -32600 for what is not JSON-RPC or is over the message limit — with the request's id — and the
// server serving on), and calls on one session answered in the order they were sent.
import { afterEach, describe, expect, it } from 'vitest';
import { freshDataDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { rawMcp, serverPool, toolCall, type RawMcp } from '../helpers/mcp';
import * as sdk from '../../src/cli/mcp/sdk';
import { deriveListing } from '../../src/cli/mcp/listing';

const open: RawMcp[] = [];
const pool = serverPool();
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.end()));
  await pool.closeAll();
});
const start = async (dir: string) => {
  const raw = await rawMcp(dir, ['--agent', 'planner']);
  open.push(raw);
  return raw;
};

describe('crux mcp: lines that are not requests', () => {
  it('answers what does not parse with -32700 (id null) and what is not JSON-RPC with -32600, and serves on', async () => {
    const raw = await start(freshDataDir());
    raw.send('this is not json');
    raw.send('{"jsonrpc":"2.0","id":1,"method":"tools/list"');
    raw.send('');
    raw.send('   ');
    raw.send('{"jsonrpc":"2.0","id":7}');
    raw.send('[1,2]');
    raw.send({ jsonrpc: '1.0', id: 'eight', method: 'tools/list' });
    raw.send(toolCall(9, 'session_put', { session_id: 'after', state: 1 }));
    const put = await raw.answer(9);
    expect(put.result.isError).toBeFalsy();
    const errors = raw.messages().filter((m) => m.error !== undefined);
    expect(errors.map((m) => [m.id, m.error.code])).toEqual([
      [null, -32700],
      [null, -32700],
      [7, -32600],
      [null, -32600],
      ['eight', -32600],
    ]);
    expect(errors[0].error.message).toMatch(/^Parse error: /);
    expect(raw.messages().every((m) => m.jsonrpc === '2.0')).toBe(true);
  });

  it('refuses a message over the limit with its own id, drops it whole, and answers the next one', async () => {
    const dir = freshDataDir();
    const raw = await start(dir);
    const big = 'x'.repeat(11 * 1024 * 1024);
    // Its id comes after 11 MiB of params, and params hold an "id" of their own: the top-level one is answered.
    raw.send(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"session_put","arguments":{"session_id":"huge","state_text":"\\"${big}\\""},"id":"not this"},"id":41}`,
    );
    raw.send(toolCall(42, 'session_put', { session_id: 'small', state: { ok: true } }));
    const refused = await raw.answer(41);
    expect(refused.error.code).toBe(-32600);
    expect(refused.error.message).toMatch(/^the message is \d+ bytes, over the limit of 10485760 bytes/);
    expect(refused.error.data).toMatchObject({ limit_bytes: 10485760 });
    expect((await raw.answer(42)).result.isError).toBeFalsy();
    expect(raw.stderr()).toMatch(/^crux: refused a message of \d+ bytes, over the limit of 10485760 bytes; still serving$/m);
    // Delivered in many small writes, the line is refused all the same, and without its id it is answered with null.
    for (let i = 0; i < 12; i++) raw.write(`${i === 0 ? '{"jsonrpc":"2.0","method":"x","params":"' : ''}${'y'.repeat(1024 * 1024)}`);
    raw.write('"}\n');
    raw.send(toolCall(43, 'session_get', { session_id: 'small' }));
    expect((await raw.answer(43)).result.content[0].text).toBe('{"ok":true}');
    expect(
      raw
        .messages()
        .filter((m) => m.id === null)
        .map((m) => m.error.code),
    ).toEqual([-32600]);
    expect(await raw.end()).toBe(0);
    open.length = 0;
    expect((await crux(dir, ['--agent', 'planner', 'session', 'get', 'huge'])).exitCode).toBe(3);
  }, 60_000);

  it('answers a last line that ends without a newline', async () => {
    const dir = freshDataDir();
    const raw = await start(dir);
    raw.write(JSON.stringify(toolCall(1, 'session_put', { session_id: 'tail', state: 5 })));
    expect(await raw.end()).toBe(0);
    open.length = 0;
    expect(raw.messages().find((m) => m.id === 1).result.isError).toBeFalsy();
    expect((await crux(dir, ['--agent', 'planner', 'session', 'get', 'tail'])).stdout).toBe('5');
  });
});

describe('crux mcp: params as MCP 2025-11-25 has them answered', () => {
  it('answers a call that is not one, an unknown tool and any tools/list cursor with -32602 in one line; arguments that fail the schema with a refusal (isError, 5)', async () => {
    const raw = await start(freshDataDir());
    const call = (id: number, params: unknown) => raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params });
    call(1, { name: 'session_get', arguments: 'x' });
    call(2, { name: 'session_get', arguments: [1] });
    call(3, { arguments: {} });
    // params that are not structured: not a JSON-RPC request at all.
    call(4, 'session_get');
    call(5, { name: 'no_such_tool', arguments: {} });
    raw.send({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { cursor: 'bogus' } });
    raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 5 } });
    expect((await raw.answer(4)).error.code).toBe(-32600);
    for (const id of [1, 2, 3, 5, 6, 7]) {
      const answer = await raw.answer(id);
      expect(answer.error?.code, JSON.stringify(answer)).toBe(-32602);
      expect(answer.error.message).not.toContain('\n');
      expect(answer.error.message.length).toBeLessThan(200);
    }
    expect((await raw.answer(1)).error.message).toBe('the arguments of session_get must be an object of arguments by name, not a string');
    expect((await raw.answer(6)).error.message).toMatch(/^invalid cursor "bogus"/);
    // A tool's arguments that fail its input schema: a result the model reads and corrects itself by (SEP-1303).
    call(8, { name: 'session_get', arguments: { session_id: 42, extra: true } });
    call(9, { name: 'session_put', arguments: { session_id: 'x' } });
    for (const id of [8, 9]) {
      const { result } = await raw.answer(id);
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toMatchObject({ code: 5, kind: 'invalid_input' });
      expect(result.content[0].text).toMatch(
        /^crux: invalid arguments for session_(get|put): [^\n]+ \(nothing was changed; tools\/list describes what each argument accepts\)$/,
      );
    }
    expect((await raw.answer(8)).result.structuredContent.error.message).toBe(
      'invalid arguments for session_get: argument session_id: expected string, received number; unknown argument extra',
    );
    // And the server serves on: the tool list without a cursor, a call that is one.
    raw.send({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} });
    expect((await raw.answer(10)).result.tools.length).toBeGreaterThan(10);
    raw.send(toolCall(11, 'session_put', { session_id: 'after', state: 1 }));
    expect((await raw.answer(11)).result.isError).toBeFalsy();
  });
});

describe('crux mcp: calls on one session answered in the order received', () => {
  it('a session_get sent right after a session_put, without waiting, sees the put (raw, 3 sessions × 20 pairs)', async () => {
    const raw = await start(freshDataDir());
    let id = 0;
    const pairs: [number, number, string][] = [];
    for (let i = 0; i < 20; i++) {
      for (const s of ['a', 'b', 'c']) {
        const state = `{"${s}":${i}}`;
        raw.send(toolCall(++id, 'session_put', { session_id: s, state_text: state }));
        raw.send(toolCall(++id, 'session_get', { session_id: s }));
        pairs.push([id - 1, id, state]);
      }
    }
    for (const [put, get, state] of pairs) {
      expect((await raw.answer(put)).result.isError).toBeFalsy();
      const got = await raw.answer(get);
      expect(got.result.content[0].text).toBe(state);
    }
    // Answers on one session come out in the order asked.
    const order = raw
      .messages()
      .filter((m) => typeof m.id === 'number')
      .map((m) => m.id);
    for (const [put, get] of pairs) expect(order.indexOf(put)).toBeLessThan(order.indexOf(get));
  }, 60_000);

  it('through the SDK client: put, get, history, close, get sent at once run in that order', async () => {
    const s = await pool.start(freshDataDir(), 'planner');
    const [put, get, history, close, after, list] = await Promise.all([
      s.call('session_put', { session_id: 'job', state_text: '{"step": 1}' }),
      s.call('session_get', { session_id: 'job' }),
      s.call('session_history', { session_id: 'job' }),
      s.call('session_close', { session_id: 'job' }),
      s.call('session_get', { session_id: 'job' }),
      s.call('session_list', { all: true }),
    ]);
    expect(put.isError).toBeFalsy();
    expect(get.content[0].text).toBe('{"step": 1}');
    expect(history.structuredContent.history).toHaveLength(1);
    expect(close.structuredContent.outcome).toBe('closed');
    expect(after.structuredContent.session.status).toBe('closed');
    expect(list.structuredContent.sessions.map((x: any) => x.status)).toEqual(['closed']);
  });
});

describe('crux mcp: the tool list', () => {
  it("answers tools/list with the build's list, the same JSON as the tools' zod shapes give now", async () => {
    // The built server carries the list the build derived (listing.ts): a tool changed since would show here.
    const raw = await start(freshDataDir());
    raw.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const { result } = await raw.answer(1);
    expect(result.tools).toEqual(JSON.parse(JSON.stringify(deriveListing(sdk))));
    expect(result.tools.map((t: { name: string }) => t.name)).toContain('session_put');
  });
});
