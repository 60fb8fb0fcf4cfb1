// A history read of one key on PostgreSQL over compacted history (issue 47): each generation of the history table
// through its `key` column (schema 6), not read whole — the same versions as a whole read; a generation moved there
// by an older crux (keys null), or with a row deleted by hand, is read whole.
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { EventDraft, JournalRecord } from '../../../src/journal/codec/record';
import { COUNTERS } from './counters';
import { freshStoreUrl, pgSkipReason, psql, recording } from '../../helpers/pg';

const TS = '2026-12-01T09:00:00.000Z';

/** A statement that reads a whole history generation. */
const wholeGeneration = (text: string) => /from \S+history where journal = \$1 and generation = \$2 order by line$/.test(text.trim());

describe.skipIf(pgSkipReason() !== undefined)('PgStore history read by key over history generations', () => {
  it('reads each generation by its key column; the same versions as a whole read; unkeyed or gapped generations whole', async () => {
    const url = freshStoreUrl();
    const schema = new URL(url).searchParams.get('schema');
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: () => {} }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [COUNTERS] });
    const append = (drafts: EventDraft[]) =>
      store.write(async (tx) => {
        await tx.load(COUNTERS);
        tx.append(COUNTERS, drafts);
      }, TS);
    const versions = async (key: string, byKey: boolean) => {
      const out: [number, string, number][] = [];
      await store.readHistory(COUNTERS, (r: JournalRecord) => r.data.id === key && out.push([r.seq, r.ev, r.data.n]), byKey ? { key } : {});
      return out;
    };
    try {
      for (let round = 0; round < 3; round++) {
        await append(Array.from({ length: 30 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i + 100 * round } })));
        await append([{ ev: 'counter.added', data: { id: 'k3', n: round } }]);
        await store.compact([COUNTERS], TS);
      }
      await append([{ ev: 'counter.added', data: { id: 'k3', n: 9 } }]);
      const seen = recording(store);
      const keys = ['k3', 'k4', 'k29', 'none'];
      const want = new Map<string, unknown>();
      for (const key of keys) want.set(key, await versions(key, false));
      expect(seen.some(wholeGeneration)).toBe(true);
      seen.length = 0;
      for (const key of keys) expect({ key, v: await versions(key, true) }).toEqual({ key, v: want.get(key) });
      expect(seen.filter(wholeGeneration)).toEqual([]);
      // Rows an older crux moved (no key): read whole, the same versions.
      psql(`update ${schema}.history set key = null where generation = 2`);
      seen.length = 0;
      for (const key of keys) expect({ key, v: await versions(key, true) }).toEqual({ key, v: want.get(key) });
      expect(seen.filter(wholeGeneration).length).toBe(keys.length);
      // A row deleted by hand: the generation read whole, which tells the gap as a whole read does.
      psql(`delete from ${schema}.history where generation = 1 and line = 10`);
      seen.length = 0;
      expect(await versions('k3', true)).toEqual(await versions('k3', false));
      expect(seen.filter(wholeGeneration).length).toBeGreaterThanOrEqual(2);
    } finally {
      await store.close();
    }
  });
});
