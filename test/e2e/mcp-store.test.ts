// `crux mcp` over a store other writers share (SPEC §10: every call reads the store as it is now), on a data
// directory and on PostgreSQL: the CLI writes between two calls of one long-lived server and the server sees
// each write; and a session's state through a handoff, byte for byte (SPEC §6), through the CLI and the tools.
import { afterEach, describe, expect, it } from 'vitest';
import { freshDataDir, freshStore, STORE_KINDS } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { serverPool } from '../helpers/mcp';

const NOW = '2026-12-01T10:00:00.000Z';
const pool = serverPool(['--now', NOW]);
afterEach(pool.closeAll);
const cli = (store: string, args: string[], input?: string) => crux(store, ['--now', NOW, ...args], input === undefined ? {} : { input });

describe.each(STORE_KINDS)('crux mcp on a %s store shared with the CLI', (kind) => {
  it('sees every CLI write made between two of its calls: sessions, cases, handoffs', async () => {
    const store = freshStore(kind);
    const s = await pool.start(store, 'planner');
    await s.call('session_put', { session_id: 'shared', state: { v: 1 } });
    expect((await s.call('session_get', { session_id: 'shared' })).content[0].text).toBe('{"v":1}');
    expect((await s.call('session_list')).structuredContent.sessions.map((x: any) => x.session_id)).toEqual(['shared']);
    expect((await s.call('case_list')).structuredContent.cases).toEqual([]);
    expect((await s.call('handoff_list')).structuredContent.handoffs).toEqual([]);

    expect((await cli(store, ['--agent', 'planner', 'session', 'put', 'shared', '{"v": 2}'])).exitCode).toBe(0);
    expect((await cli(store, ['--agent', 'planner', 'session', 'put', 'second', '[]'])).exitCode).toBe(0);
    const recorded = await cli(store, ['case', 'record', '--task', 'seen by the server', '--action', 'a', '--outcome', 'o']);
    expect(recorded.exitCode).toBe(0);
    expect((await cli(store, ['handoff', 'mint', 'second', '--from', 'planner'])).exitCode).toBe(0);

    expect((await s.call('session_get', { session_id: 'shared' })).content[0].text).toBe('{"v": 2}');
    expect((await s.call('session_history', { session_id: 'shared' })).structuredContent.history).toHaveLength(2);
    expect((await s.call('session_list')).structuredContent.sessions.map((x: any) => [x.session_id, x.status])).toEqual([
      ['second', 'handed_off'],
      ['shared', 'active'],
    ]);
    expect((await s.call('case_list')).structuredContent.cases.map((c: any) => c.case_id)).toEqual([recorded.stdout.trim()]);
    expect((await s.call('case_show', { case_id: recorded.stdout.trim() })).structuredContent.case.task).toBe('seen by the server');
    expect((await s.call('case_retrieve', { task: 'seen by the server' })).structuredContent.results).toHaveLength(1);
    expect((await s.call('handoff_list')).structuredContent.handoffs.map((h: any) => h.session_id)).toEqual(['second']);

    // A close by the CLI is the state the next call decides on.
    expect((await cli(store, ['--agent', 'planner', 'session', 'close', 'shared'])).exitCode).toBe(0);
    const refused = await s.call('session_put', { session_id: 'shared', state: 3 });
    expect(refused.structuredContent.error.code).toBe(4);
    expect((await cli(store, ['--agent', 'planner', 'session', 'delete', 'second', '--yes'])).exitCode).toBe(0);
    expect((await s.call('session_get', { session_id: 'second' })).structuredContent.error.code).toBe(3);
  }, 60_000);
});

describe('a session state through a handoff, byte for byte (SPEC §6)', () => {
  const STATES = [
    '{"plan": ["a", "b"]}',
    '{\n  "plan": [ "a" , "b" ],\n  "n": 12345678901234567890, "x": 1.0, "e": 1e400\n}\n',
    '  [1,  2]  ',
    '"text with  spaces"',
  ];

  it('put → mint → accept → get through the CLI', async () => {
    const dir = freshDataDir();
    for (const [i, state] of STATES.entries()) {
      expect((await cli(dir, ['--agent', 'planner', 'session', 'put', `s${i}`, state])).exitCode).toBe(0);
      const minted = await cli(dir, ['--agent', 'planner', 'handoff', 'mint', `s${i}`, '--to', 'builder']);
      expect(minted.exitCode).toBe(0);
      expect((await cli(dir, ['handoff', 'accept', '-', '--as', 'builder'], minted.stdout)).exitCode).toBe(0);
      expect(Buffer.from((await cli(dir, ['--agent', 'builder', 'session', 'get', `s${i}`])).stdout)).toEqual(Buffer.from(state));
    }
  });

  it('session_put → create_handoff → accept_handoff → session_get through the tools, and across to the CLI', async () => {
    const dir = freshDataDir();
    const planner = await pool.start(dir, 'planner');
    const builder = await pool.start(dir, 'builder');
    for (const [i, state] of STATES.entries()) {
      await planner.call('session_put', { session_id: `m${i}`, state_text: state });
      const minted = await planner.call('create_handoff', { session_id: `m${i}`, target_agent: 'builder' });
      expect(minted.isError).toBeFalsy();
      expect((await builder.call('accept_handoff', { handoff: minted.content[0].text })).isError).toBeFalsy();
      const got = await builder.call('session_get', { session_id: `m${i}` });
      expect(got.content[0].text).toBe(state);
      expect(got.structuredContent.session.state_text).toBe(state);
      expect(Buffer.from((await cli(dir, ['--agent', 'builder', 'session', 'get', `m${i}`])).stdout)).toEqual(Buffer.from(state));
    }
    // Minted by the CLI, accepted by the tool (and the other way round).
    await cli(dir, ['--agent', 'planner', 'session', 'put', 'cross', STATES[1]!]);
    const cliMinted = await cli(dir, ['--agent', 'planner', 'handoff', 'mint', 'cross']);
    await builder.call('accept_handoff', { handoff: JSON.parse(cliMinted.stdout) });
    expect((await builder.call('session_get', { session_id: 'cross' })).content[0].text).toBe(STATES[1]);
    await planner.call('session_put', { session_id: 'back', state_text: STATES[2] });
    const toolMinted = await planner.call('create_handoff', { session_id: 'back' });
    expect((await cli(dir, ['handoff', 'accept', '-', '--as', 'builder'], toolMinted.content[0].text)).exitCode).toBe(0);
    expect((await cli(dir, ['--agent', 'builder', 'session', 'get', 'back'])).stdout).toBe(STATES[2]);
  }, 60_000);
});
