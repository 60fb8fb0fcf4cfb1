// given(a data directory of cases: imports, replacements, deletions, later records) → when(a limited list,
// newest first, by outcome and by tag) → then(the cases a replay lists, reading the text of the cases shown only).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { newestCases, sortedCases, type ColumnOrder } from '../../../src/domain/case/newest';
import { countedCases } from '../../../src/cli/operations/case';
import { contextOf } from '../../../src/cli/context';
import { CASE_ORDERS, windowOf } from '../../../src/domain/list-window';
import { CASE_STORE, caseIdsStartingWith, deleteCase, importCases, listCases, recordCase, retrieveCases, type CaseScope } from '../../../src/domain/case/store';
import type { Case } from '../../../src/domain/case/case';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { Column } from '../../../src/journal/derived/bank/columns';
import type { CaseId } from '../../../src/shared/ids';
import { FULL, tempDir } from '../../helpers/cli';
import { body, FILTERS as SHARED_FILTERS, random, TAGS } from './fixtures';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const quiet = { warn: () => {} };

/** The journals alone, copied to a fresh directory (no cache/): what a replay answers. */
function journalsOnly(root: string): DataDir {
  const copy = join(tempDir(), 'truth');
  fs.mkdirSync(copy, { mode: 0o700 });
  for (const f of fs.readdirSync(root)) if (f.endsWith('.jsonl')) fs.copyFileSync(join(root, f), join(copy, f));
  return new DataDir(copy, quiet, 5_000);
}

/** `ordered`: created_at never decreases as cases are written (ties kept), as when one clock writes them all. */
async function seeded(seed: number, ordered = false): Promise<string> {
  const rand = random(seed);
  let tick = 0;
  const later = () => new Date(NOW + 1000 * (rand() < 0.3 ? tick : ++tick)).toISOString();
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const root = join(tempDir(), 'data');
  const scope: CaseScope = { dir: new DataDir(root, quiet, 5_000), now: NOW };
  // Tasks say the tags' words too: a term is not a tag.
  const caseOf = (i: number) =>
    body({
      id: `c${i}`,
      task: `task ${i} ${pick(TAGS)} ${pick(['deploy', 'prod', 'the'])}`,
      tags: TAGS.filter(() => rand() < 0.3),
      success: rand() < 0.7,
      // Few distinct values: ties, which a sorted list keeps newest first.
      reward: pick([0, 0.25, 0.5, 1]),
      created: ordered ? later() : pick(['2026-01-01T00:00:00.000Z', '2025-06-30T23:59:59.999Z', '2026-03-01T08:00:00.000Z', '0001-02-03T04:05:06.007Z']),
      reused: pick([0, 0, 1, 2]),
    }) as unknown as Case;
  await importCases(
    scope,
    Array.from({ length: 400 }, (_, i) => caseOf(i)),
  );
  for (let round = 0; round < 6; round++) {
    const dir = new DataDir(root, quiet, 5_000);
    const s = { dir, now: ordered ? NOW + 1000 * ++tick : NOW + round };
    for (let k = 0; k < 8; k++) await deleteCase(s, `c${Math.floor(rand() * 400)}` as CaseId).catch(() => undefined);
    // Replaced cases move to the newest end.
    await importCases(
      s,
      Array.from({ length: 10 }, () => caseOf(Math.floor(rand() * 450))),
    );
    await recordCase(
      ordered ? { ...s, now: NOW + 1000 * ++tick } : s,
      {
        task: `new ${round} alpha`,
        context: null,
        action: 'a',
        outcome: 'o',
        success: round % 2 === 0,
        reward: 0.5,
        tags: round % 3 ? ['alpha'] : ['beta', 'x'],
        source_receipt: null,
      },
      `n${round}` as CaseId,
    );
    // Reuse counts set on cases the snapshot holds (they move in the order by reused).
    await retrieveCases(s, { text: pick(TAGS), topK: 3, onlySuccess: false, minSimilarity: 0 }, true);
    // A read between writes leaves cache/ (the bank's snapshot and its delta) at this point.
    await newestCases(s, { success: false }, 3, true);
  }
  return root;
}

/** With a tag that is only a word of tasks. */
const FILTERS = [...SHARED_FILTERS, { tags: ['the'] }];

describe('case list newest first, limited and filtered', () => {
  it('answers as a replay of the journal lists, for every filter and limit', async () => {
    // One random store in `npm test` (the other tests below read nine more), three in CI's run (FULL).
    for (const seed of FULL ? [1, 2, 3] : [1]) {
      const root = await seeded(seed);
      expect(fs.existsSync(join(root, 'cache'))).toBe(true);
      const truth = journalsOnly(root);
      const all = (await listCases({ dir: truth, now: NOW })).toReversed();
      for (const [f, filter] of FILTERS.entries()) {
        const passing = all.filter((c) => ('success' in filter ? c.success === filter.success : true) && (filter.tags ?? []).every((t) => c.tags.includes(t)));
        for (const [l, limit] of [1, 20, 1000].entries()) {
          const got = await newestCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, limit, true);
          expect(got.cases, `${seed} ${JSON.stringify(filter)} ${limit}`).toEqual(passing.slice(0, limit));
          expect(got.total).toBe(passing.length);
          // The same from a replay without cache/: for one limit a filter in turn in `npm test`, every one in CI.
          if (!FULL && l !== f % 3) continue;
          const replayed = await newestCases({ dir: journalsOnly(root), now: NOW }, filter, limit, false);
          expect(replayed.cases).toEqual(got.cases);
        }
      }
    }
  });

  it('completes case ids from the bank as the whole list gives them, in the order written', async () => {
    const root = await seeded(5);
    const truth = (await listCases({ dir: journalsOnly(root), now: NOW })).map((c) => c.case_id as string);
    for (const prefix of ['', 'c', 'c1', 'c39', 'n', 'n3', 'zz'])
      for (const max of [1, 7, 1000]) {
        const got = await caseIdsStartingWith({ dir: new DataDir(root, quiet, 5_000), now: NOW }, prefix, max);
        expect(got, `${prefix} ${max}`).toEqual(truth.filter((id) => id.startsWith(prefix)).slice(0, max));
      }
  });

  it('reads the text of the cases it shows, not of every case', async () => {
    const root = await seeded(4);
    const dir = new DataDir(root, quiet, 5_000);
    await newestCases({ dir, now: NOW }, {}, 1, true);
    let read = 0;
    const counting = Object.create(dir) as DataDir;
    counting.readAt = async (spec, at) => {
      read += at.length;
      return dir.readAt(spec, at);
    };
    const failed = await newestCases({ dir: counting, now: NOW }, { success: false }, 5, true);
    expect(failed.cases).toHaveLength(5);
    expect(read).toBeLessThanOrEqual(5);
    read = 0;
    // A tag's own postings (its mark), not its words' (which other tasks say too): the cases shown, read.
    const tagged = await newestCases({ dir: counting, now: NOW }, { tags: ['gamma'] }, 5, false);
    expect(tagged.cases).toHaveLength(5);
    expect(read).toBeLessThanOrEqual(5);
    // Counted too (a terminal's list, the dashboard's page): from the tag's postings, still the shown ones read.
    read = 0;
    const counted = await newestCases({ dir: counting, now: NOW }, { tags: ['gamma'] }, 5, true);
    expect(counted.cases).toEqual(tagged.cases);
    expect(counted.total).toBeGreaterThan(20);
    expect(read).toBeLessThanOrEqual(5);
  });

  it('pages and counts a list by several tags over the postings of the rarest, not every case', async () => {
    const root = await seeded(7);
    const all = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
    const slots = await new DataDir(root, quiet, 5_000).readWith(CASE_STORE, (bank) => bank.slots);
    const get = vi.spyOn(Column.prototype, 'get');
    try {
      for (const filter of [{ tags: ['beta', 'x'] }, { tags: ['x', 'alpha'], success: true }, { tags: ['alpha', 'gamma', 'deploy-prod'] }]) {
        const want = all.filter((c) => ('success' in filter ? c.success === filter.success : true) && filter.tags.every((t) => c.tags.includes(t)));
        get.mockClear();
        const got = await newestCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, 2, true);
        expect(got.cases, JSON.stringify(filter)).toEqual(want.slice(0, 2));
        expect(got.total, JSON.stringify(filter)).toBe(want.length);
        expect(want.length).toBeGreaterThan(2);
        // A walk of every live slot asked each one's liveness at least: here the rarest tag's postings are asked.
        expect(get.mock.calls.length, JSON.stringify(filter)).toBeLessThan(slots);
      }
      // A tag few cases hold: a page short of its limit reads that tag's postings, newest first or sorted, not every case.
      await importCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, [
        body({ id: 'r1', task: 'rare one', tags: ['rare', 'alpha'], reward: 0.5 }) as unknown as Case,
        body({ id: 'c3', task: 'rare two', tags: ['alpha', 'rare'], reward: 0.5 }) as unknown as Case,
      ]);
      await newestCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, {}, 1, true);
      const again = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
      const filter = { tags: ['alpha', 'rare'] };
      const where = (c: Case) => filter.tags.every((t) => c.tags.includes(t));
      get.mockClear();
      const newest = await newestCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, 20, true);
      expect(newest.cases.map((c) => c.case_id)).toEqual(['c3', 'r1']);
      expect(newest.total).toBe(2);
      expect(get.mock.calls.length).toBeLessThan(50);
      for (const key of ['created', 'reward', 'reused'] as ColumnOrder[])
        for (const descending of [true, false]) {
          get.mockClear();
          const got = await sortedCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, { key, descending }, 20, true);
          expect(got?.cases, `${key} ${descending}`).toEqual(windowOf(again, CASE_ORDERS, { sort: { key, descending }, where }).rows);
          expect(get.mock.calls.length, `${key} ${descending}`).toBeLessThan(50);
        }
    } finally {
      get.mockRestore();
    }
  });

  it('sorted by created, reward or reused (either way) answers as the whole list sorted, ties newest first', async () => {
    for (const seed of [6]) {
      const root = await seeded(seed);
      const all = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
      for (const filter of FILTERS)
        for (const key of ['created', 'reward', 'reused'] as ColumnOrder[])
          for (const descending of [true, false])
            for (const limit of [2, 1000]) {
              const where = (c: Case) => ('success' in filter ? c.success === filter.success : true) && (filter.tags ?? []).every((t) => c.tags.includes(t));
              const want = windowOf(all, CASE_ORDERS, { sort: { key, descending }, where, limit });
              // From cache/ (a replay without it is the first test's).
              for (const dir of [new DataDir(root, quiet, 5_000)]) {
                const got = await sortedCases({ dir, now: NOW }, filter, { key, descending }, limit, true);
                const what = `${seed} ${JSON.stringify(filter)} ${descending ? '-' : ''}${key} ${limit}`;
                expect(got?.cases, what).toEqual(want.rows);
                expect(got?.total, what).toBe(want.total);
              }
            }
    }
  });

  it('newest by created_at where created never decreases as written: the slots from the last, no column read whole', async () => {
    for (const seed of [9, 10]) {
      const root = await seeded(seed, true);
      const all = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
      const range = vi.spyOn(Column.prototype, 'range');
      try {
        for (const filter of FILTERS)
          for (const limit of [2, 50, 1000]) {
            const where = (c: Case) => ('success' in filter ? c.success === filter.success : true) && (filter.tags ?? []).every((t) => c.tags.includes(t));
            const want = windowOf(all, CASE_ORDERS, { sort: { key: 'created', descending: true }, where, limit });
            const got = await sortedCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, { key: 'created', descending: true }, limit, true);
            const what = `${seed} ${JSON.stringify(filter)} ${limit}`;
            expect(got?.cases, what).toEqual(want.rows);
            expect(got?.total, what).toBe(want.total);
          }
        expect(range).not.toHaveBeenCalled();
      } finally {
        range.mockRestore();
      }
      // A case written later with an earlier time: no longer the slots' order, and still as the whole list.
      await importCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, [
        body({ id: 'early', task: 'early', created: '2020-01-01T00:00:00.000Z' }) as unknown as Case,
      ]);
      const again = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
      const want = windowOf(again, CASE_ORDERS, { sort: { key: 'created', descending: true }, where: () => true, limit: 1000 });
      const got = await sortedCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, {}, { key: 'created', descending: true }, 1000, true);
      expect(got?.cases.map((c) => c.case_id)).toEqual(want.rows.map((c) => c.case_id));
      expect(got?.cases.at(-1)?.case_id).toBe('early');
    }
  });

  it('by created_at, reward or reused, either way (created went backwards, counts set since): the order kept, no column read whole', async () => {
    for (const [seed, ordered] of [
      [11, false],
      [12, true],
    ] as const) {
      const root = await seeded(seed, ordered);
      const all = (await listCases({ dir: journalsOnly(root), now: NOW })).toReversed();
      // The slots folded since the bank's snapshot (its delta) and those re-counted since, which a read sorts in memory.
      const [folded, moved] = await new DataDir(root, quiet, 5_000).readWith(CASE_STORE, (bank) => [
        bank.slots - bank.cachedSlots,
        bank.reused.overlaid()!.size,
      ]);
      const since = folded + moved;
      expect(moved).toBeGreaterThan(0);
      expect(since).toBeLessThan(all.length / 4);
      const range = vi.spyOn(Column.prototype, 'range');
      const get = vi.spyOn(Column.prototype, 'get');
      // A short page always; in `npm test` a long one or the whole list in turn, both in CI.
      let turn = 0;
      try {
        for (const key of ['created', 'reward', 'reused'] as ColumnOrder[])
          for (const filter of FILTERS)
            for (const descending of [false, true])
              for (const limit of FULL ? [2, 50, 1000] : [2, turn++ % 2 ? 50 : 1000]) {
                const where = (c: Case) => ('success' in filter ? c.success === filter.success : true) && (filter.tags ?? []).every((t) => c.tags.includes(t));
                const want = windowOf(all, CASE_ORDERS, { sort: { key, descending }, where, limit });
                get.mockClear();
                const got = await sortedCases({ dir: new DataDir(root, quiet, 5_000), now: NOW }, filter, { key, descending }, limit, true);
                const what = `${seed} ${JSON.stringify(filter)} ${descending ? '-' : ''}${key} ${limit}`;
                expect(got?.cases, what).toEqual(want.rows);
                expect(got?.total, what).toBe(want.total);
                // A short page without a filter to count: what it shows and the slots folded since, not the column.
                if (limit === 2 && Object.keys(filter).length === 0) expect(get.mock.calls.length, what).toBeLessThan(6 * since + 50);
              }
        expect(range).not.toHaveBeenCalled();
      } finally {
        range.mockRestore();
        get.mockRestore();
      }
    }
  });

  it("the dashboard's page, newest by created_at, reads the text of the cases it shows, not of every case", async () => {
    const root = await seeded(8);
    const ctx = contextOf({ dataDir: root, now: new Date(NOW).toISOString(), json: true }, {}, () => {});
    await countedCases(ctx, {}, { limit: 1 });
    const readAt = vi.spyOn(DataDir.prototype, 'readAt');
    try {
      const { document, total } = await countedCases(ctx, { success: false }, { sort: { key: 'created', descending: true }, limit: 10 });
      expect(document.cases).toHaveLength(10);
      expect(total).toBeGreaterThan(50);
      const read = readAt.mock.calls.reduce((n, [, at]) => n + at.length, 0);
      expect(read).toBeLessThanOrEqual(10);
    } finally {
      readAt.mockRestore();
    }
  });
});
