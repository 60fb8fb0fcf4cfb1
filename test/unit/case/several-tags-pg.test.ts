// given(a PostgreSQL store of cases, two common tags and a rare one) → when(a limited list by several tags at once,
// counted) → then(the total a replay lists; where the page was short of its limit, no statement counts the rows:
// the page read the whole answer — several tags' intersection does not follow from the counts kept per tag).
import { describe, expect, it } from 'vitest';
import { importCases, listCases, CASE_STORE } from '../../../src/domain/case/store';
import type { Case } from '../../../src/domain/case/case';
import { newestCases, sortedCases } from '../../../src/domain/case/newest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { freshStoreUrl, pgSkipReason, recording } from '../../helpers/pg';
import { body, random } from './fixtures';

const NOW = Date.parse('2026-12-01T12:00:00Z');

describe.skipIf(pgSkipReason() !== undefined)('case list by several tags on PostgreSQL', () => {
  it('counts as a replay; a page short of its limit counts no rows', async () => {
    const store = new PgStore(parseStoreUrl(freshStoreUrl('severaltags')), {
      reporter: { warn: () => {} },
      lockTimeoutMs: 10_000,
      cruxVersion: 'test',
      specs: [CASE_STORE],
    });
    try {
      const rand = random(47);
      const cases = Array.from({ length: 300 }, (_, i) => {
        const tags = ['a', 'b'].filter(() => rand() < 0.6);
        if (i % 50 === 7) tags.push('a', 'rare');
        return body({
          id: `c${i}`,
          task: `task ${i}`,
          tags: [...new Set(tags)],
          success: rand() < 0.7,
          created: new Date(NOW - i * 1000).toISOString(),
        }) as unknown as Case;
      });
      await importCases({ dir: store, now: NOW }, cases);
      const all = (await listCases({ dir: store, now: NOW })).toReversed();
      const seen = recording(store);
      for (const tags of [
        ['a', 'rare'],
        ['a', 'b'],
      ])
        for (const success of [undefined, false]) {
          const want = all.filter((c) => tags.every((t) => c.tags.includes(t)) && (success === undefined || c.success === success));
          for (const limit of [5, 20]) {
            seen.length = 0;
            const what = `${tags} ${success} ${limit}`;
            const newest = await newestCases({ dir: store, now: NOW }, { tags, success }, limit, true);
            expect(
              newest.cases.map((c) => c.case_id),
              what,
            ).toEqual(want.slice(0, limit).map((c) => c.case_id));
            expect(newest.total, what).toBe(want.length);
            const sorted = await sortedCases({ dir: store, now: NOW }, { tags, success }, { key: 'created', descending: false }, limit, true);
            expect(sorted?.total, what).toBe(want.length);
            // The rare pair's answer (6 cases) fits a first page of 20 candidates: nothing counted (of 5, it does not).
            if (tags.includes('rare') && limit === 20)
              expect(
                seen.filter((t) => /count\(\*\)/.test(t)),
                what,
              ).toEqual([]);
          }
        }
      // The common pair's total needed a count: it ran, through the rows (an intersection).
      expect(seen.some((t) => /count\(\*\)/.test(t))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
