// `case list` newest first with a limit and a filter (--only-success/--only-failure, --tag): read from the
// bank's columns and postings (the derived layer: cache/cases.jsonl.state, or a replay), so that only the cases
// shown have their text read — not every case, as a whole listing reads them.
import type { Case } from './case';
import { CASE_STORE, holds, resultCases, type CaseScope } from './store';
import { indexTerms } from './sealed';
import type { CaseBank } from './bank';

export interface NewestFilter {
  readonly success?: boolean | undefined;
  /** Every one of these tags. */
  readonly tags?: readonly string[] | undefined;
}

/** Cases whose text is read at once: a limit's worth, or a batch of tag candidates. */
const BATCH = 64;

/**
 * The newest `limit` live cases that pass `filter` (newest: the reverse of the order they were last written, as
 * `case list` shows them), and how many pass it in all: from the columns for --only-*, exactly; with tags, only
 * when `count` (each candidate's text is read to check its tags), else undefined.
 */
export async function newestCases(
  scope: CaseScope,
  filter: NewestFilter,
  limit: number,
  count: boolean,
): Promise<{ cases: Case[]; total: number | undefined }> {
  const tags = filter.tags ?? [];
  if (tags.length > 0) await scope.dir.settleSealMode?.();
  const bank = await scope.dir.read(CASE_STORE);
  const passes = numbersPass(bank, filter.success, tags);
  const live = bank.liveSlots();
  if (tags.length === 0) {
    const shown: number[] = [];
    let total = 0;
    for (let i = live.length - 1; i >= 0; i--) {
      if (!passes(live[i]!)) continue;
      total++;
      if (shown.length < limit) shown.push(live[i]!);
    }
    return { cases: await resultCases(scope.dir, bank, shown), total };
  }
  // A tag's words are terms of its cases, and of cases whose task says them: each candidate's tags are checked,
  // a batch at a time from the newest, until the limit is met (or, to count them, all of them).
  const cases: Case[] = [];
  let total = 0;
  for (let i = live.length - 1; i >= 0 && (count || cases.length < limit); ) {
    const batch: number[] = [];
    for (; i >= 0 && batch.length < BATCH; i--) if (passes(live[i]!)) batch.push(live[i]!);
    for (const c of await resultCases(scope.dir, bank, batch)) {
      if (!tags.every((t) => c.tags.includes(t))) continue;
      total++;
      if (cases.length < limit) cases.push(c);
    }
  }
  return { cases, total: count ? total : undefined };
}

/** Whether a slot may pass the filter, by its columns and postings alone (with tags: it may, then its text says). */
function numbersPass(bank: CaseBank, success: boolean | undefined, tags: readonly string[]): (slot: number) => boolean {
  const postings: { cached: Uint32Array; later: readonly number[] }[] = [];
  for (const term of new Set(tags.flatMap((t) => [...indexTerms(t)]))) {
    const id = bank.termIdOf(term);
    // A word no case holds: no case has the tag.
    if (id === undefined) return () => false;
    const list = bank.postingsOf(id);
    postings.push({ cached: list.cached, later: list.later });
  }
  const later = postings.map((list) => new Set(list.later));
  return (slot) =>
    (success === undefined || (bank.success.get(slot) === 1) === success) && postings.every((list, i) => holds(list.cached, slot) || later[i]!.has(slot));
}
