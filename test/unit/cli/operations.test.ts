// The operations every adapter runs, in-process (no bin/crux spawned): a context from parsed options and an
// environment (contextOf), the same call the CLI, MCP and hooks make, over both kinds of store.
import { describe, expect, it } from 'vitest';
import { contextOf, type Context } from '../../../src/cli/context';
import { recordCase, retrieve, retrieveQuery, showCase, listCases } from '../../../src/cli/operations/case';
import { accept, mint } from '../../../src/cli/operations/handoff';
import { checkJournals } from '../../../src/cli/operations/journal';
import { closeSession, getSession, historyOf, listSessions, putSession } from '../../../src/cli/operations/session';
import { MAC_ALG } from '../../../src/domain/handoff/crypto';
import { CruxError } from '../../../src/shared/errors';
import { newId, parseAgentName, parseLogicalSessionId, type CaseId, type HandoffId } from '../../../src/shared/ids';
import { randomBytes } from '../../../src/shared/random';
import { freshStore, testEnv } from '../../helpers/cli';

const id = parseLogicalSessionId;

/** A context on `store` at the time `now`, as `crux --now <now> [--agent A]` would build it. */
function ctxOn(store: string, now = '2026-12-01T10:00:00.000Z', agent?: string): Context {
  const where = store.startsWith('postgres') ? { store } : { dataDir: store };
  return contextOf({ ...where, now, agent, json: true }, testEnv());
}

/** The kind of CruxError a call is refused with. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (error) {
    if (error instanceof CruxError) return error.kind;
    throw error;
  }
  throw new Error('the call was not refused');
}

// A data directory only: under vitest the PostgreSQL store's lazy require (cli/store.ts, which the bundle resolves
// to dist/pg.cjs) does not load TypeScript; the e2e suites run the same operations over PostgreSQL.
describe('operations in-process on a data directory', () => {
  const kind = 'dir' as const;
  it('put, get (the exact bytes), list, history, close exactly once', async () => {
    const store = freshStore(kind);
    const ctx = ctxOn(store);
    const put = await putSession(ctx, id('build-42'), { state: '{"step": 1,  "n": 12345678901234567890}', ttlMs: 3_600_000 });
    expect(put.session).toMatchObject({ session_id: 'build-42', status: 'active', total_tokens: 0 });
    expect((await getSession(ctx, id('build-42'))).state).toBe('{"step": 1,  "n": 12345678901234567890}');
    await putSession(ctxOn(store, '2026-12-01T10:01:00.000Z'), id('build-42'), { state: '{"step":2}', addTokens: 5 });
    const listed = await listSessions(ctxOn(store, '2026-12-01T10:02:00.000Z'), { all: false, archived: false, allAgents: false, stranded: false } as never);
    expect(listed.sessions.map((s) => [s.session_id, s.total_tokens])).toEqual([['build-42', 5]]);
    const history = (await historyOf(ctx, id('build-42'), undefined)) as unknown as { history: { seq: number }[] };
    expect(history.history).toHaveLength(2);
    const first = await closeSession(ctx, id('build-42'), { outcome: 'failed', summary: 'red' });
    const second = await closeSession(ctx, id('build-42'), { outcome: 'completed' });
    expect([first.outcome, second.outcome]).toEqual(['closed', 'already_closed']);
    expect(second.session).toMatchObject({ status: 'closed' });
    expect(await refusal(() => putSession(ctx, id('build-42'), { state: '{}' }))).toBe('conflict');
    expect(await refusal(() => getSession(ctx, id('nope')))).toBe('not_found');
  });

  it('record, show, list and retrieve cases with the ranking of case retrieve', async () => {
    const ctx = ctxOn(freshStore(kind));
    const base = { context: null, success: true, reward: 1, tags: ['tls'], source_receipt: null };
    const tls = await recordCase(ctx, { ...base, task: 'rotate the TLS certificate', action: 'certbot renew', outcome: 'renewed' });
    await recordCase(ctx, { ...base, task: 'compile the kernel', action: 'make -j2', outcome: 'built', tags: [] });
    expect((await showCase(ctx, tls.case.case_id as CaseId)).case.action).toBe('certbot renew');
    expect((await listCases(ctx, {} as never)).cases).toHaveLength(2);
    const { results } = await retrieve(ctx, { text: 'renew the tls certificate', topK: 3, onlySuccess: true, minSimilarity: 0.3 }, false);
    expect(results.map((r) => r.case.case_id)).toEqual([tls.case.case_id]);
    expect(await refusal(() => showCase(ctx, newId<CaseId>('c', randomBytes(12))))).toBe('not_found');
  });

  it('a handoff minted and accepted carries the state byte for byte; a second accept is replayed', async () => {
    const store = freshStore(kind);
    const planner = ctxOn(store, '2026-12-01T10:00:00.000Z', 'planner');
    await putSession(planner, id('plan-1'), { state: '{"plan": ["a", "b"]}' });
    const minted = await mint(planner, {
      sessionId: id('plan-1'),
      from: parseAgentName('planner'),
      to: parseAgentName('builder'),
      message: null,
      ttlMs: 3_600_000,
      includeFacts: false,
      taskRecord: undefined,
      alg: MAC_ALG,
      handoffId: newId<HandoffId>('h', randomBytes(12)),
    });
    const builder = ctxOn(store, '2026-12-01T10:05:00.000Z', 'builder');
    const bytes = Buffer.from(minted.text);
    const accepted = await accept(builder, bytes, { receiver: parseAgentName('builder'), maxAgeMs: 86_400_000 });
    expect(accepted.document.accepted).toMatchObject({ session_id: 'plan-1', agent: 'builder' });
    expect((await getSession(builder, id('plan-1'))).state).toBe('{"plan": ["a", "b"]}');
    expect(await refusal(() => accept(builder, bytes, { receiver: parseAgentName('builder'), maxAgeMs: 86_400_000 }))).toBe('replayed');
  });

  it('journal check over what the operations wrote is healthy', async () => {
    const ctx = ctxOn(freshStore(kind));
    await putSession(ctx, id('a'), { state: '{}' });
    const checked = await checkJournals(ctx, { repair: false } as never);
    expect(JSON.stringify(checked)).toContain('"healthy":true');
  });
});

describe('retrieveQuery', () => {
  it("reads a retrieve's numbers as the command line and the tool give them, refusing each by the name its adapter uses", () => {
    expect(retrieveQuery('renew tls', {})).toEqual({ text: 'renew tls', topK: 5, onlySuccess: false, minSimilarity: 0 });
    expect(retrieveQuery('x', { topK: '500', minSimilarity: '0.25', onlySuccess: true })).toEqual({
      text: 'x',
      topK: 100,
      onlySuccess: true,
      minSimilarity: 0.25,
    });
    expect(() => retrieveQuery('x', { topK: 'many' })).toThrow(/^--top-k must be a whole number/);
    expect(() => retrieveQuery('x', { minSimilarity: '2' })).toThrow(/^--min-similarity must be a number from 0 to 1/);
    expect(() => retrieveQuery('x', { topK: '-1' }, ['top_k', 'min_similarity'])).toThrow(/^top_k must be a whole number/);
    expect(() => retrieveQuery('x', { minSimilarity: '2' }, ['top_k', 'min_similarity'])).toThrow(/^min_similarity must be a number from 0 to 1/);
  });
});

describe('contextOf', () => {
  it('refuses a --now that is not RFC 3339 as invalid input, before any store is touched', () => {
    expect(() => contextOf({ dataDir: '/nonexistent/crux', now: 'yesterday' }, testEnv())).toThrow(CruxError);
  });
});
