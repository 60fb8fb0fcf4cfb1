// given(cases with tags — none, several, one twice, a tag that is also a word of other tasks — then deletions,
// replacements and records after the bank's snapshot) → when(success by tag) → then(each live case counted once per
// distinct tag, and its success, as the whole list says: from the bank's marks on a data directory, cached or
// replayed, and from the term rows on PostgreSQL; no case's text read).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { casesByTag } from '../../../src/domain/case/tag-counts';
import { CASE_STORE, deleteCase, importCases, listCases, recordCase, type CaseScope } from '../../../src/domain/case/store';
import type { Case } from '../../../src/domain/case/case';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { CaseId } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';
import { bankOf, body, bodyOf, recorded, type Given } from './fixtures';
import fc from 'fast-check';
import { Bank } from '../../../src/journal/derived/bank/bank';
import { CaseBank, decodeCaseBank } from '../../../src/domain/case/bank';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { applyBankDelta, encodeBankDelta } from '../../../src/journal/derived/bank/delta';
import { markedTag } from '../../../src/journal/derived/bank/layout';
import { tagCounts } from '../../../src/journal/derived/bank/tag-tally';
import { propertyRuns } from '../../helpers/cli';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const quiet = { warn: () => {} };
const TAGS = ['alpha', 'beta', 'deploy', 'with space', 'ünï', '(untagged)'];

async function write(dir: JournalStore): Promise<void> {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const caseOf = (i: number) =>
    body({
      id: `c${i}`,
      task: `task ${i} deploy alpha`,
      // One case in nine carries a tag twice: counted once.
      tags: i % 9 === 0 ? ['beta', 'beta'] : TAGS.filter(() => rand() < 0.25),
      success: rand() < 0.6,
    }) as unknown as Case;
  await importCases(
    { dir, now: NOW },
    Array.from({ length: 120 }, (_, i) => caseOf(i)),
  );
  // A read leaves the bank's snapshot; what follows is folded past it.
  await casesByTag({ dir, now: NOW });
  const s: CaseScope = { dir, now: NOW + 1 };
  for (const i of [3, 9, 40, 41]) await deleteCase(s, `c${i}` as CaseId);
  await importCases(
    s,
    [5, 18, 130].map((i) => caseOf(i)),
  );
  await recordCase(
    s,
    { task: 'new', context: null, action: 'a', outcome: 'o', success: false, reward: 1, tags: ['alpha', 'new one'], source_receipt: null },
    'n1' as CaseId,
  );
}

/** What the whole list says: each live case once per distinct tag, (untagged) for those without. */
async function fromList(dir: JournalStore) {
  const cases = await listCases({ dir, now: NOW });
  const tags = new Map<string, { cases: number; successes: number }>();
  for (const c of cases)
    for (const tag of c.tags.length === 0 ? ['(untagged)'] : new Set(c.tags)) {
      const t = tags.get(tag) ?? { cases: 0, successes: 0 };
      t.cases += 1;
      if (c.success) t.successes += 1;
      tags.set(tag, t);
    }
  return { cases: cases.length, tags: [...tags].map(([tag, t]) => ({ tag, ...t })) };
}

const sorted = <T extends { tag: string }>(r: { cases: number; tags: T[] }) => ({ ...r, tags: [...r.tags].sort((a, b) => (a.tag < b.tag ? -1 : 1)) });

describe('success by tag, from the derived layer', () => {
  it('counts as the whole list, from cache/ and from a replay, reading no case text', async () => {
    const root = join(tempDir(), 'data');
    const dir = new DataDir(root, quiet, 5_000);
    await write(dir);
    const copy = join(tempDir(), 'replay');
    fs.mkdirSync(copy, { mode: 0o700 });
    fs.copyFileSync(join(root, 'cases.jsonl'), join(copy, 'cases.jsonl'));
    const want = sorted(await fromList(new DataDir(copy, quiet, 5_000)));
    expect(want.tags.find((t) => t.tag === 'beta')!.cases).toBeGreaterThan(10);
    const readAt = vi.spyOn(DataDir.prototype, 'readAt');
    const postings = vi.spyOn(Bank.prototype, 'postingsOf');
    try {
      expect(sorted(await casesByTag({ dir: new DataDir(root, quiet, 5_000), now: NOW }))).toEqual(want);
      // From the snapshot's tally and the changes since (the deletions, replacements and records past it): no
      // tag's postings read.
      expect(postings).not.toHaveBeenCalled();
      fs.rmSync(join(root, 'cache'), { recursive: true, force: true });
      expect(sorted(await casesByTag({ dir: new DataDir(root, quiet, 5_000), now: NOW }))).toEqual(want);
      expect(readAt).not.toHaveBeenCalled();
    } finally {
      readAt.mockRestore();
      postings.mockRestore();
    }
  });

  it("keeps each tag's counts with the bank's snapshot and delta, as a replay counts them, and without them by the postings", () => {
    const event = fc.oneof(
      { weight: 4, arbitrary: fc.record({ i: fc.nat(11), tags: fc.array(fc.constantFrom('a', 'b', 'ü c', ''), { maxLength: 3 }), success: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ del: fc.nat(11) }) },
    );
    const given = (e: { i: number; tags: string[]; success: boolean } | { del: number }): Given =>
      'del' in e ? { ev: 'case.deleted', data: { case_id: `c${e.del}` } } : recorded({ id: `c${e.i}`, task: `task ${e.i}`, tags: e.tags, success: e.success });
    fc.assert(
      fc.property(fc.array(fc.array(event, { maxLength: 12 }), { minLength: 4, maxLength: 4 }), (parts) => {
        const model = new Map<string, { tags: string[]; success: boolean }>();
        const counted = (bank: Bank) => {
          const { marks, untagged } = tagCounts(bank);
          const out = new Map<string, [number, number]>();
          for (const m of marks) if (m.cases !== 0 || m.successes !== 0) out.set(`#${markedTag(bank.vocab[m.id]!)}`, [m.cases, m.successes]);
          if (untagged.cases !== 0 || untagged.successes !== 0) out.set('untagged', [untagged.cases, untagged.successes]);
          return out;
        };
        const want = () => {
          const out = new Map<string, [number, number]>();
          for (const c of model.values())
            for (const tag of c.tags.length === 0 ? ['untagged'] : new Set(c.tags.map((t) => `#${t}`))) {
              const [n, s] = out.get(tag) ?? [0, 0];
              out.set(tag, [n + 1, s + (c.success ? 1 : 0)]);
            }
          return out;
        };
        const fold = (bank: CaseBank, part: (typeof parts)[number]) => {
          for (const e of part) {
            if ('del' in e) model.delete(`c${e.del}`);
            else model.set(`c${e.i}`, { tags: e.tags, success: e.success });
          }
          return bankOf(part.map(given), bank);
        };
        // A replay, its snapshot, records past it, a delta of those, more records, a snapshot of all that.
        let bank = fold(new CaseBank(), parts[0]!);
        expect(counted(bank)).toEqual(want());
        const snapshot = encodeBank(bank);
        bank = fold(decodeCaseBank(bodyOf(snapshot))!, parts[1]!);
        expect(counted(bank)).toEqual(want());
        const delta = encodeBankDelta(bank)!;
        bank = decodeCaseBank(bodyOf(snapshot))!;
        expect(applyBankDelta(bank, delta)).toBe(true);
        bank = fold(bank, parts[2]!);
        expect(counted(bank)).toEqual(want());
        const again = encodeBank(bank);
        const atAgain = want();
        bank = fold(decodeCaseBank(bodyOf(again))!, parts[3]!);
        expect(counted(bank)).toEqual(want());
        // A snapshot without the tally (an older crux's head): the same counts, by the postings.
        const nl = again.indexOf(10);
        const { tags: _, untagged: __, ...older } = JSON.parse(again.toString('utf8', 0, nl));
        const head = Buffer.from(JSON.stringify(older));
        const padded = Buffer.concat([head, Buffer.alloc(nl - head.length, 32), again.subarray(nl)]);
        const plain = decodeCaseBank(bodyOf(padded))!;
        expect(plain.cache.tagCounts).toBeUndefined();
        expect(counted(plain)).toEqual(atAgain);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it.skipIf(pgSkipReason() !== undefined)('counts as the whole list on PostgreSQL, from the term rows', async () => {
    const storeUrl = freshStoreUrl('tagcounts');
    const store = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    try {
      await write(store);
      const want = sorted(await fromList(store));
      let whole = 0;
      const counting = Object.create(store) as JournalStore;
      counting.readWith = async (spec, use) => {
        whole++;
        return store.readWith(spec, use);
      };
      expect(sorted(await casesByTag({ dir: counting, now: NOW }))).toEqual(want);
      expect(whole).toBe(0);
      // Term rows an older crux wrote (another version: no marks): not trusted, so the bank counts; and `journal
      // check` calls them stale, not damage (the next write rebuilds them).
      const schema = new URL(storeUrl).searchParams.get('schema');
      psql(`update "${schema}".term_indexes set version = 1`, storeUrl);
      psql(`update "${schema}".journal_cases_terms set terms = array(select t from unnest(terms) t where not starts_with(t, '#'))`, storeUrl);
      const older = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
      try {
        expect(sorted(await casesByTag({ dir: older, now: NOW }))).toEqual(want);
        const [report] = await older.check([CASE_STORE], { repair: false, ts: new Date(NOW).toISOString() });
        expect(report?.derived).toBeUndefined();
      } finally {
        await older.close();
      }
    } finally {
      await store.close();
    }
  });
  it.skipIf(pgSkipReason() !== undefined)('on PostgreSQL counts over the term rows when the counts kept are not guarded', async () => {
    const storeUrl = freshStoreUrl('tagrows');
    const store = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    try {
      await write(store);
      const want = sorted(await fromList(store));
      // The counts' guard disabled, then the counts made wrong: not believed, so the term rows (still trusted) are counted.
      const schema = new URL(storeUrl).searchParams.get('schema');
      psql(`alter table "${schema}".journal_cases_counts disable trigger all; update "${schema}".journal_cases_counts set n = n * 2`, storeUrl);
      const bare = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
      try {
        let whole = 0;
        const counting = Object.create(bare) as JournalStore;
        counting.readWith = async (spec, use) => {
          whole++;
          return bare.readWith(spec, use);
        };
        expect(sorted(await casesByTag({ dir: counting, now: NOW }))).toEqual(want);
        expect(whole).toBe(0);
      } finally {
        await bare.close();
      }
    } finally {
      await store.close();
    }
  });
  it.skipIf(pgSkipReason() !== undefined)('on PostgreSQL reads the counts kept with the term rows, not the rows, and check compares them', async () => {
    const storeUrl = freshStoreUrl('tagkept');
    const store = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
    try {
      await write(store);
      const want = sorted(await fromList(store));
      expect(sorted(await casesByTag({ dir: store, now: NOW }))).toEqual(want);
      // A write that forges crux's own (the documented limit) is believed: what is counted comes from the counts.
      const schema = new URL(storeUrl).searchParams.get('schema');
      psql(`select set_config('crux.writer', 'on', true); update "${schema}".journal_cases_counts set n = n * 2`, storeUrl);
      const forged = new PgStore(parseStoreUrl(storeUrl), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [CASE_STORE] });
      try {
        const got = sorted(await casesByTag({ dir: forged, now: NOW }));
        expect(got).toEqual({ cases: want.cases * 2, tags: want.tags.map((t) => ({ ...t, cases: t.cases * 2, successes: t.successes * 2 })) });
        const [report] = await forged.check([CASE_STORE], { repair: false, ts: new Date(NOW).toISOString() });
        expect(JSON.stringify(report?.derived)).toMatch(/journal_cases_counts disagrees with a replay/);
      } finally {
        await forged.close();
      }
    } finally {
      await store.close();
    }
  });
});
