// given(the same cases recorded over many hours in a PostgreSQL store and in a data directory) → when(the activity
// chart's counts of a window are read: PgStore.readTally) → then(the data directory's counts, from the index table's
// tally rows: the rows fetched are the window's hours × series at most, not its records; a tally row edited by hand
// is not trusted, and `journal check` names it).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASE_STORE, recordCase } from '../../../src/domain/case/store';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { CaseId } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql, tapReader } from '../../helpers/pg';

const HOUR = 3_600_000;
const START = Date.parse('2026-11-01T00:00:00Z');
const quiet = { warn: () => {} };
const draft = (i: number) => ({
  task: `task ${i}`,
  context: null,
  action: 'a',
  outcome: 'o',
  success: i % 3 !== 0,
  reward: 0.5,
  tags: ['t'],
  source_receipt: null,
});

/** 144 cases, four an hour over 36 hours (a window of 24 hours from the 10th holds 96: more than its tally rows). */
async function write(dir: JournalStore): Promise<void> {
  for (let i = 0; i < 144; i++) await recordCase({ dir, now: START + Math.floor(i / 4) * HOUR + (i % 4) * 60_000 }, draft(i), `c${i}` as CaseId);
}

/** The rows each statement of `store`'s reader fetched, added up. */
function rowsFetched(store: PgStore): { rows: number } {
  const seen = { rows: 0 };
  tapReader(
    store,
    () => {},
    (answer) => {
      if (Array.isArray(answer)) seen.rows += answer.length;
    },
  );
  return seen;
}

describe.skipIf(pgSkipReason() !== undefined)('the activity tally on PostgreSQL (index rows)', () => {
  it('answers what the data directory counts, reading the window hours, and is not trusted once edited', async () => {
    const url = freshStoreUrl('tally');
    const store = new PgStore(parseStoreUrl(url), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    const truth = new DataDir(join(tempDir(), 'truth'), quiet, 5_000);
    try {
      await write(store);
      await write(truth);
      const from = START / HOUR + 10;
      const to = from + 23;
      const want = await truth.readTally(CASE_STORE, from, to);
      expect(want?.flat().reduce((a, b) => a + b, 0)).toBe(96);
      const fetched = rowsFetched(store);
      expect(await store.readTally(CASE_STORE, from, to)).toEqual(want);
      // The catalog, the binding's look-up, and the window's rows: one a series and hour at most (here one an hour).
      expect(fetched.rows).toBeLessThanOrEqual(24 * CASE_STORE.tally!.series.length + 10);
      expect(await store.readTally(CASE_STORE, START / HOUR - 5, START / HOUR + 70)).toEqual(
        await truth.readTally(CASE_STORE, START / HOUR - 5, START / HOUR + 70),
      );
      // One count edited by hand: the index's trigger withdraws its trust (the chart reads backwards), check names it.
      const schema = parseStoreUrl(url).schema;
      psql(`update "${schema}".journal_cases_index set num_value = num_value + 1 where key = '' and name like '%${from + 1}.%'`, url);
      expect(await store.readTally(CASE_STORE, from, to)).toBeUndefined();
      const [report] = await store.check([CASE_STORE], { repair: true, ts: new Date(START + 100 * HOUR).toISOString() });
      expect(report?.derived?.problems.join('\n')).toMatch(/activity counts \(1 hour·series\)/);
      // Repaired: trusted again, and right.
      expect(await store.readTally(CASE_STORE, from, to)).toEqual(want);
    } finally {
      await store.close();
    }
  });
});
