// A long-lived process sees what every other process wrote (SPEC §10, §11): `crux mcp` with the CLI writing between
// its calls, on both kinds of store; on PostgreSQL, the server restarted and stopped between calls (a cluster of this
// suite's own): the next call reconnects, and closing stdin still ends the server.
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CRUX, crux, freshStore, STORE_KINDS, storeArgs, testEnv } from '../helpers/cli';
import { startMcp, type McpSession } from '../helpers/mcp';
import { OwnCluster, pgSkipReason } from '../helpers/pg';

const open: McpSession[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
async function server(store: string): Promise<McpSession> {
  const s = await startMcp(store, [], { env: { CRUX_LOCK_TIMEOUT: '2s' } });
  open.push(s);
  return s;
}

describe.each(STORE_KINDS)('crux mcp on a %s store, the CLI writing between its calls', (kind) => {
  it('a session put and a case recorded by the CLI are seen by the next call, even when the store did not exist at the first', async () => {
    const store = freshStore(kind);
    const s = await server(store);
    expect((await s.call('session_get', { session_id: 'x' })).isError).toBe(true);
    expect((await s.call('session_list', {})).structuredContent.sessions).toEqual([]);
    expect((await crux(store, ['session', 'put', 'x', '{"v":1}'])).exitCode).toBe(0);
    expect((await s.call('session_get', { session_id: 'x' })).content[0].text).toBe('{"v":1}');
    expect((await crux(store, ['session', 'put', 'x', '{"v":2}'])).exitCode).toBe(0);
    expect((await s.call('session_get', { session_id: 'x' })).content[0].text).toBe('{"v":2}');
    const recorded = await crux(store, ['case', 'record', '--task', 'rotate the tls certificate', '--action', 'certbot renew', '--outcome', 'renewed']);
    expect(recorded.exitCode).toBe(0);
    const found = await s.call('case_retrieve', { task: 'tls certificate' });
    expect(found.structuredContent.results.map((r: any) => r.case.case_id)).toEqual([recorded.stdout.trim()]);
  });
});

describe.skipIf(pgSkipReason() !== undefined)('crux mcp on PostgreSQL, the server restarted or stopped between calls', () => {
  const cluster = new OwnCluster();
  beforeAll(() => {
    cluster.start();
  });
  afterAll(() => {
    cluster.stop();
  });

  it('the next calls after a restart (-m fast) answer: the lost connection is replaced, and the writes of the CLI are seen', async () => {
    const store = cluster.freshStore('mcp');
    const s = await server(store);
    expect((await s.call('session_put', { session_id: 'a', state: { v: 1 } })).isError).toBeFalsy();
    cluster.restart();
    // The connection the server held was cut: the call after it may meet that (75), never hangs; the next answers.
    const first = await s.call('session_get', { session_id: 'a' });
    if (first.isError) expect(first.structuredContent.error.code).toBe(75);
    expect((await s.call('session_get', { session_id: 'a' })).content[0].text).toBe('{"v":1}');
    expect((await crux(store, ['session', 'put', 'b', '{}'])).exitCode).toBe(0);
    expect((await s.call('session_list', {})).structuredContent.sessions.map((x: any) => x.session_id).sort()).toEqual(['a', 'b']);
  });

  it('closing stdin ends the server (exit 0) once its calls are answered', async () => {
    const store = cluster.freshStore('mcpstdin');
    const child = spawn(CRUX, [...storeArgs(store), 'mcp'], { env: testEnv({ CRUX_LOCK_TIMEOUT: '1s' }), stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'session_list', arguments: {} } };
    let out = '';
    const answered = new Promise<void>((resolve) => child.stdout.on('data', (c) => ((out += String(c)), out.includes('"id":2') && resolve())));
    child.stdin.write(`${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify(call)}\n`);
    await answered;
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
