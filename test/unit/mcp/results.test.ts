// What a tools/call answers (server.ts): the operation's document as structuredContent and its text, or a refusal;
// either way with the damage the call's replays passed over, in the document and under the text (never under
// bytes to copy). In-process, over the SDK's in-memory transport.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../../src/cli/mcp/sdk';
import { createServer } from '../../../src/cli/mcp/server';

async function connect(dataDir: string) {
  const { server } = createServer(sdk, { dataDir, agent: 'planner', now: '2026-12-01T10:00:00Z' }, 'test');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'results-test', version: '1' });
  await client.connect(clientSide);
  return async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as any;
}

describe('crux mcp: call results', () => {
  it('answers documents and refusals with the damage passed over, under the text unless it is bytes to copy', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'crux-mcp-results-')), 'data');
    const call = await connect(dataDir);
    for (const id of ['a', 'b', 'c']) expect((await call('session_put', { session_id: id, state_text: `{"id":"${id}"}` })).isError).toBeUndefined();
    const archived = await call('session_archive', { session_id: 'a', reason: 'done' });
    expect(archived.content).toEqual([{ type: 'text', text: 'archived session a (agent planner): archived, 0 tokens' }]);
    expect(archived.structuredContent.session).toMatchObject({ session_id: 'a', status: 'archived' });
    expect(archived).not.toHaveProperty('isError');

    const path = join(dataDir, 'sessions.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('\\"id\\":\\"b\\"', '\\"id\\":\\"B\\"');
    writeFileSync(path, lines.join('\n'));
    const warning = { file: 'sessions.jsonl', line: 2, reason: 'hash mismatch' };
    const said = 'warning: sessions.jsonl:2: hash mismatch (passed over; journal_check shows every problem)';

    const list = await call('session_list', { all: true });
    expect(list.structuredContent.warnings).toEqual([warning]);
    expect(list.content[0].text.endsWith(`\n${said}`)).toBe(true);
    const get = await call('session_get', { session_id: 'c' });
    expect(get.structuredContent.warnings).toEqual([warning]);
    expect(get.content).toEqual([{ type: 'text', text: '{"id":"c"}' }]);

    const refused = await call('session_history', { session_id: 'nope' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error).toMatchObject({ code: 3, kind: 'not_found' });
    expect(refused.structuredContent.warnings).toEqual([warning]);
    expect(refused.content[0].text).toMatch(new RegExp(`^crux: [^\\n]+\\n${said.replace(/[()]/g, '\\$&')}$`));
  });
});
