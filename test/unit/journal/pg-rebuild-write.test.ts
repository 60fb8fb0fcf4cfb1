// given(a PostgreSQL store of sessions and cases whose derived rows are not trusted: their binding names another
// crux's keys (an upgrade), or a journal row was edited by hand)
// → when(a write comes: a session put, a case recorded; or `journal check --repair`)
// → then(the rows are rebuilt entity by entity, a few a round, and the journal is never folded whole in memory —
// neither for the write's own read nor for the rebuild —; the rows are trusted again and agree with a replay, and the
// write's answer is the one it gives with trusted rows).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CASE_STORE, recordCase } from '../../../src/domain/case/store';
import { SESSION_STORE } from '../../../src/domain/session/fold';
import * as sessions from '../../../src/domain/session/store';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { CaseId, LogicalSessionId } from '../../../src/shared/ids';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';

const START = Date.parse('2026-11-01T00:00:00Z');
const quiet = { warn: () => {} };
const SPECS = [SESSION_STORE, CASE_STORE] as StoreSpec<unknown>[];

/** 40 sessions (an import: one batch) and 12 cases, then a few puts. */
async function seeded(url: string): Promise<PgStore> {
  const store = new PgStore(parseStoreUrl(url), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: SPECS });
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ session_id: `imp${i}`, state: { i }, updated_at: new Date(START - i * 60_000).toISOString() }),
  );
  await sessions.importSessions({ dir: store, agent: undefined, now: START }, Buffer.from(`${lines.join('\n')}\n`), { maxStateBytes: 1 << 20 });
  for (let i = 0; i < 12; i++) {
    const draft = {
      task: `deploy the api ${i}`,
      context: null,
      action: 'a',
      outcome: 'o',
      success: i % 3 !== 0,
      reward: 0.5,
      tags: ['t'],
      source_receipt: null,
    };
    await recordCase({ dir: store, now: START + i * 60_000 }, draft, `c${i}` as CaseId);
  }
  for (const id of ['imp3', 'new1'])
    await sessions.putSession({ dir: store, agent: undefined, now: START + 3_600_000 }, id as LogicalSessionId, { state: '{"n":1}' });
  return store;
}

const schemaOf = (url: string) => `"${parseStoreUrl(url).schema}"`;
const bindings = (url: string) =>
  psql(
    `select journal, trusted, names from ${schemaOf(url)}.secondary_indexes union all select journal, trusted, '' from ${schemaOf(url)}.term_indexes order by 1, 3`,
    url,
  );

describe.skipIf(pgSkipReason() !== undefined)('a write that finds derived rows it cannot trust (PostgreSQL)', () => {
  beforeAll(() => {
    process.env.CRUX_TEST_KEYS_PER_ROUND = '3';
  });
  afterAll(() => {
    delete process.env.CRUX_TEST_KEYS_PER_ROUND;
  });

  for (const [what, untrust] of [
    [
      'after an upgrade (the binding names other keys)',
      (s: string) => `update ${s}.secondary_indexes set names = 'upgraded'; update ${s}.term_indexes set version = version + 100`,
    ],
    [
      'after a journal row was edited by hand (its key column)',
      (s: string) => `update ${s}.journal_sessions set key = 'imp9' where key = 'imp3'; update ${s}.journal_cases set key = null where key = 'c4'`,
    ],
  ] as const) {
    it(`rebuilds them entity by entity, never folding a journal whole: ${what}`, async () => {
      const url = freshStoreUrl('rbwrite');
      const store = await seeded(url);
      // The answers with trusted rows, from a twin store written the same way.
      const twinUrl = freshStoreUrl('rbtwin');
      const twin = await seeded(twinUrl);
      try {
        const want = bindings(url);
        psql(untrust(schemaOf(url)), url);
        expect(bindings(url)).not.toEqual(want);
        const whole = [vi.spyOn(store, 'fold'), vi.spyOn(store, 'foldWhole')];
        const scope = { dir: store, agent: undefined, now: START + 7_200_000 };
        const put = await sessions.putSession(scope, 'imp3' as LogicalSessionId, { state: '{"again":true}' });
        const draft = { task: 'rotate the keys', context: null, action: 'a', outcome: 'o', success: true, reward: 1, tags: ['k'], source_receipt: null };
        await recordCase({ dir: store, now: START + 7_200_000 }, draft, 'c99' as CaseId);
        for (const spy of whole) expect(spy).not.toHaveBeenCalled();
        for (const spy of whole) spy.mockRestore();
        expect(bindings(url)).toEqual(want);
        expect(put).toEqual(await sessions.putSession({ ...scope, dir: twin }, 'imp3' as LogicalSessionId, { state: '{"again":true}' }));
        // Trusted and right: a check compares every derived row with a replay.
        const reports = await store.check(SPECS, { repair: false, ts: new Date(START + 9_000_000).toISOString() });
        for (const r of reports) expect(r.derived, r.file).toBeUndefined();
        for (const r of reports) expect(r.problems ?? [], r.file).toEqual([]);
      } finally {
        await store.close();
        await twin.close();
        psql(`drop schema if exists ${schemaOf(url)} cascade; drop schema if exists ${schemaOf(twinUrl)} cascade`, url);
      }
    }, 120_000);
  }
});
