// The case bank's success by tag (the dashboard's overview, SPEC §12): how many live cases carry each tag and how
// many of them succeeded, counted in the derived layer — each tag's mark in the bank's postings (layout.ts
// tagMark) with the success column, or a database's term rows — never by reading every case's text.
// Tags and outcomes are plain on an encrypted store (SPEC §13): no key is needed.
import { markedTag, metaSuccess, tagMark } from '../../journal/derived/bank/layout';
import { scrubText } from '../../shared/scrub';
import { CASE_STORE, type CaseScope } from './store';

export interface TagCount {
  readonly tag: string;
  readonly cases: number;
  readonly successes: number;
}

/** What the cases without a tag count as. */
const UNTAGGED = '(untagged)';
/** The facts' success (bank-terms.ts factsOf: the third). */
const SUCCESS_FACT = 3;
const MARK = tagMark('').slice(0, 1);

/** Every live case counted, and per tag (each case once per distinct tag; UNTAGGED for those with none), in no order. */
export async function casesByTag(scope: CaseScope): Promise<{ cases: number; tags: TagCount[] }> {
  const rows = await scope.dir.countTerms?.(CASE_STORE, { prefix: MARK, where: { fact: SUCCESS_FACT, equals: '1' } });
  const counts = new Map<string, { cases: number; successes: number }>();
  // As a tag is shown (scrubbed on the way out, as a case's are): tags that read the same are one.
  const add = (tag: string, cases: number, successes: number) => {
    if (cases === 0) return;
    const c = counts.get(tag) ?? { cases: 0, successes: 0 };
    c.cases += cases;
    c.successes += successes;
    counts.set(tag, c);
  };
  let total: number;
  if (rows !== undefined) {
    total = rows.all.entities;
    add(UNTAGGED, rows.without.entities, rows.without.matching);
    for (const t of rows.terms) add(scrubText(markedTag(t.term) ?? t.term), t.entities, t.matching);
  } else {
    total = await scope.dir.readWith(CASE_STORE, (bank) => {
      const n = bank.slots;
      const tagged = new Uint8Array(n);
      for (let id = 0; id < bank.vocab.length; id++) {
        const tag = markedTag(bank.vocab[id]!);
        if (tag === undefined) continue;
        const { cached, cachedMeta, later } = bank.postingsOf(id);
        let cases = 0;
        let successes = 0;
        // A cached posting carries its slot's success (packMeta): no column read for it.
        for (let i = 0; i < cached.length; i++) {
          const slot = cached[i]!;
          if (bank.alive.get(slot) !== 1) continue;
          tagged[slot] = 1;
          cases++;
          if (metaSuccess(cachedMeta[i]!)) successes++;
        }
        for (const slot of later) {
          if (bank.alive.get(slot) !== 1) continue;
          tagged[slot] = 1;
          cases++;
          if (bank.success.get(slot) === 1) successes++;
        }
        add(scrubText(tag), cases, successes);
      }
      let cases = 0;
      let successes = 0;
      for (let slot = 0; slot < n; slot++) {
        if (tagged[slot] === 1 || bank.alive.get(slot) !== 1) continue;
        cases++;
        if (bank.success.get(slot) === 1) successes++;
      }
      add(UNTAGGED, cases, successes);
      return bank.liveCount;
    });
  }
  return { cases: total, tags: [...counts].map(([tag, c]) => ({ tag, ...c })) };
}
