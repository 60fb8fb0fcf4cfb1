// The case bank's success by tag (the dashboard's overview, SPEC §12): how many live cases carry each tag and how
// many of them succeeded, counted in the derived layer — each tag's mark in the bank's postings (layout.ts
// tagMark) counted with the bank's snapshot (tag-tally.ts), or a database's term rows — never by reading every case's text.
// Tags and outcomes are plain on an encrypted store (SPEC §13): no key is needed.
import { markedTag, tagMark } from '../../journal/derived/bank/layout';
import { tagCounts } from '../../journal/derived/bank/tag-tally';
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
    // The bank's counts: its snapshot's tally and the changes since (tag-tally.ts), else one pass over the tags' postings.
    total = await scope.dir.readWith(CASE_STORE, (bank) => {
      const { marks, untagged } = tagCounts(bank);
      for (const m of marks) add(scrubText(markedTag(bank.vocab[m.id]!)!), m.cases, m.successes);
      add(UNTAGGED, untagged.cases, untagged.successes);
      return bank.liveCount;
    });
  }
  return { cases: total, tags: [...counts].map(([tag, c]) => ({ tag, ...c })) };
}
