// `crux mcp` on PostgreSQL keeps one store for the process (one connection), and every tool call tells the damage
// it passed over in its own `warnings` (SPEC §3, §10.1; issue 53) — the second call as the first, calls at once
// each their own — not only the call that happened to open the store.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import * as sdk from '../../src/cli/mcp/sdk';
import { createServer } from '../../src/cli/mcp/server';
import { closeStores } from '../../src/cli/store';
import { crux } from '../helpers/run-cli';
import { freshStoreUrl, pgSkipReason, psql } from '../helpers/pg';

afterAll(() => closeStores());

interface Warning {
  file: string;
  line: number;
  reason: string;
}

describe.skipIf(pgSkipReason() !== undefined)('crux mcp on PostgreSQL: each call its own warnings', () => {
  it('a damaged row is told to every call that passes over it, sequential and concurrent, and to none that does not', async () => {
    const store = freshStoreUrl('mcpwarn');
    for (let i = 0; i < 4; i++) expect((await crux(store, ['--agent', 'a', 'session', 'put', `s${i}`, `{"n":${i}}`])).exitCode).toBe(0);
    const schema = new URL(store).searchParams.get('schema')!;
    // The second row's body, edited by hand: a replay passes over it (and, the journal trigger having cleared the
    // derived rows' trust, every read is a replay).
    psql(`update ${schema}.journal_sessions set body = overlay(body placing 'X' from 3 for 1) where line = 2`);

    const { server } = createServer(sdk, { store, agent: 'a' }, 'test');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'pg-mcp-warnings', version: '1' });
    await client.connect(clientSide);
    const warningsOf = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      return ((result.structuredContent ?? {}) as { warnings?: Warning[] }).warnings ?? [];
    };
    try {
      const first = await warningsOf('session_list', {});
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({ file: 'sessions.jsonl', line: 2 });
      // The same read again, and another read of the same journal: each call tells it (before: only the first).
      expect(await warningsOf('session_list', {})).toEqual(first);
      expect(await warningsOf('session_get', { session_id: 's3' })).toEqual(first);
      // Calls at once: each its own warnings, once.
      const together = await Promise.all([warningsOf('session_list', {}), warningsOf('session_list', { limit: 2 }), warningsOf('case_list', {})]);
      expect(together).toEqual([first, first, []]);
    } finally {
      await client.close();
    }
  });
});
