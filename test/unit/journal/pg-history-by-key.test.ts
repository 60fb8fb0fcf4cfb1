// A history read of one key on PostgreSQL: of the journal, its first row and the key's rows alone (the `key` column),
// each verified; a damaged row of another key is not read (that is `journal check`'s), one of the key, or a row
// deleted (a gap in the sequence), sends it to the whole journal, which tells it.
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { EventDraft, JournalRecord } from '../../../src/journal/codec/record';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { COUNTERS } from './counters';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';

/** The same with derived rows (an index table): its journal is bound, a read by key trusts it while no one but crux wrote it. */
const BOUND: StoreSpec<Map<string, number>> = { ...COUNTERS, secondary: { names: ['n'], version: 1, values: (state, key) => [state.get(key)] } };
const TS = '2026-12-01T09:00:00.000Z';

describe.skipIf(pgSkipReason() !== undefined)('PgStore history read by key', () => {
  it('with derived rows: the same versions by key; a row deleted by hand (trust cleared) sends it to the whole journal', async () => {
    const url = freshStoreUrl();
    const schema = new URL(url).searchParams.get('schema');
    const warnings: string[] = [];
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [BOUND] });
    const versions = async (key: string, byKey: boolean) => {
      const out: [number, string, number][] = [];
      await store.readHistory(BOUND, (r: JournalRecord) => r.data.id === key && out.push([r.seq, r.ev, r.data.n]), byKey ? { key } : {});
      return out;
    };
    try {
      for (const drafts of [
        Array.from({ length: 20 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i } })),
        [{ ev: 'counter.added', data: { id: 'k3', n: 100 } }],
      ])
        await store.write(async (tx) => {
          await tx.load(BOUND);
          tx.append(BOUND, drafts);
        }, TS);
      await store.compact([BOUND], TS);
      await store.write(async (tx) => {
        await tx.load(BOUND);
        tx.append(BOUND, [{ ev: 'counter.added', data: { id: 'k3', n: 5 } }]);
      }, TS);
      for (const key of ['k3', 'k4', 'none']) expect({ key, v: await versions(key, true) }).toEqual({ key, v: await versions(key, false) });
      expect(warnings).toEqual([]);
      psql(`delete from ${schema}.journal_counters where key = 'k9'`);
      const reopened = new PgStore(parseStoreUrl(url), {
        reporter: { warn: (m) => warnings.push(m) },
        lockTimeoutMs: 5000,
        cruxVersion: 'test',
        specs: [BOUND],
      });
      try {
        await reopened.readHistory(BOUND, () => {}, { key: 'k3' });
        expect(warnings.join('\n')).toMatch(/sequence gap|chain break/);
      } finally {
        await reopened.close();
      }
    } finally {
      await store.close();
    }
  });

  it('reads the key rows alone; a damaged row of the key, or a gap, sends it to the whole journal', async () => {
    const url = freshStoreUrl();
    const schema = new URL(url).searchParams.get('schema');
    const warnings: string[] = [];
    const store = new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs: 5000, cruxVersion: 'test', specs: [COUNTERS] });
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
      await append(Array.from({ length: 20 }, (_, i) => ({ ev: 'counter.put', data: { id: `k${i}`, n: i } })));
      await append([{ ev: 'counter.added', data: { id: 'k3', n: 100 } }]);
      await store.compact([COUNTERS], TS);
      await append([{ ev: 'counter.added', data: { id: 'k3', n: 5 } }]);
      await append(Array.from({ length: 20 }, (_, i) => ({ ev: 'counter.put', data: { id: `j${i}`, n: i } })));
      for (const key of ['k3', 'k4', 'j7', 'none']) expect({ key, v: await versions(key, true) }).toEqual({ key, v: await versions(key, false) });
      expect(await versions('k3', true)).toEqual([
        [4, 'counter.put', 3],
        [21, 'counter.added', 100],
        [43, 'counter.added', 5],
      ]);
      // Another key's row tampered with: not read by key (no warning), told by a whole read.
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":9', '"n":99') where key = 'j9'`);
      warnings.length = 0;
      expect(await versions('k3', true)).toHaveLength(3);
      expect(warnings).toEqual([]);
      await versions('k3', false);
      expect(warnings.join('\n')).toMatch(/hash mismatch/);
      // A row of the key tampered with: read whole, told.
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":5', '"n":6') where key = 'k3' and body like '%counter.added%'`);
      warnings.length = 0;
      expect(await versions('k3', true)).toEqual(await versions('k3', false));
      expect(warnings.join('\n')).toMatch(/hash mismatch/);
      // A row deleted (a gap in the sequence): read whole, told.
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":6', '"n":5') where key = 'k3' and body like '%counter.added%'`);
      psql(`update ${schema}.journal_counters set body = replace(body, '"n":99', '"n":9') where key = 'j9'`);
      psql(`delete from ${schema}.journal_counters where key = 'j2'`);
      warnings.length = 0;
      await versions('k3', true);
      expect(warnings.join('\n')).toMatch(/sequence gap|chain break/);
    } finally {
      await store.close();
    }
  });
});
