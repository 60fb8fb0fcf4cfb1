// The parts of a limited case list (newest.ts) a store's term rows answer (a database's: JournalStore.readTermRows),
// and what both ways of listing share: how many candidates are read at once, when tags count by their marks, and
// which times order as their text.
import type { Case } from './case';
import { CASE_STORE, resultCases, type CaseScope } from './store';
import { CASE_TERMS } from './bank-terms';
import { tagMark } from '../../journal/derived/bank/layout';
import { scrubText } from '../../shared/scrub';
import type { TermHit } from '../../journal/codec/store-spec';
import type { TermRowsQuery } from '../../journal/codec/term-queries';

export interface NewestFilter {
  readonly success?: boolean | undefined;
  /** Every one of these tags. */
  readonly tags?: readonly string[] | undefined;
}

/** Cases whose text is read at once: a limit's worth, or a batch of tag candidates. */
const BATCH = 64;
/**
 * Whether every candidate of these tags (a case holding each, as written) shows them so: a tag that scrubbing
 * leaves as it is (as crux writes every tag). Then how many match is how many candidates there are, none read.
 */
export const countedByMarks = (tags: readonly string[]) => tags.every((t) => scrubText(t) === t);

/** How many candidates to read next: a batch to count them all, else what the limit still wants (a tag's candidates seldom fail). */
export const wanted = (count: boolean, limit: number, shown: number) => (count ? BATCH : Math.min(BATCH, Math.max(1, limit - shown)));

/** The times formatTime writes as four-digit years (0000–9999): their canonical texts order as the times do. */
export const YEAR_0 = -62_167_219_200_000;
export const YEAR_10000 = 253_402_300_800_000;

/** The facts of a case's term row (bank-terms.ts factsOf), numbered from 1. */
export const FACT = { reward: 1, created: 2, success: 3, reused: 4, line: 6 } as const;
/** Newest first: the line of the record that last wrote the case, highest first (the bank's slot order reversed). */
export const NEWEST = { fact: FACT.line, descending: true } as const;

/** A page of the term rows of the cases that may pass `filter` (a tag's words: candidates), or undefined (no rows to trust). */
function rowsPage(scope: CaseScope, filter: NewestFilter, order: TermRowsQuery['order'], offset: number, limit: number, count: boolean) {
  const among = [...new Set((filter.tags ?? []).map(tagMark))];
  const where = filter.success === undefined ? undefined : { fact: FACT.success, equals: filter.success ? '1' : '0' };
  return scope.dir.readTermRows?.(CASE_STORE, { among, where, order, offset, limit, count }) ?? Promise.resolve(undefined);
}

/** Whether the created_at of every case that may pass `filter` orders as its text does (years 0–9999), by the rows' edges. */
export async function timesInRange(scope: CaseScope, filter: NewestFilter): Promise<boolean> {
  for (const descending of [true, false]) {
    // Ties by line in the same direction: one walk of the term rows' (created, line) index from either end.
    const edge = (
      await rowsPage(
        scope,
        filter,
        [
          { fact: FACT.created, descending },
          { fact: FACT.line, descending },
        ],
        0,
        1,
        false,
      )
    )?.hits[0];
    const created = edge === undefined ? 0 : Number(edge.facts.split(' ')[FACT.created - 1]);
    if (!(created >= YEAR_0 && created < YEAR_10000)) return false;
  }
  return true;
}

/**
 * The page `newestCases` or `sortedCases` answers, from a store's term rows (a database's: JournalStore.readTermRows)
 * — only the rows of the cases shown read, and with tags the candidates up to them, each one's text checked; undefined
 * where the store has no rows it trusts (the caller reads the bank).
 */
export async function fromRows(
  scope: CaseScope,
  filter: NewestFilter,
  order: TermRowsQuery['order'],
  limit: number,
  count: boolean,
): Promise<{ cases: Case[]; total: number | undefined } | undefined> {
  const tags = filter.tags ?? [];
  const casesOf = (hits: readonly TermHit[]) =>
    resultCases(
      scope.dir,
      CASE_TERMS.fromHits([], hits),
      hits.map((_, i) => i),
    );
  if (tags.length === 0) {
    const got = await rowsPage(scope, filter, order, 0, limit, count);
    return got === undefined ? undefined : { cases: await casesOf(got.hits), total: got.total };
  }
  // Each candidate's tags are checked as the case shows them.
  const cases: Case[] = [];
  let total = 0;
  const byMarks = count && countedByMarks(tags);
  const reading = count && !byMarks;
  let candidates: number | undefined;
  let offset = 0;
  for (;;) {
    const size = wanted(reading, limit, cases.length);
    const got = await rowsPage(scope, filter, order, offset, size, byMarks && offset === 0);
    if (got === undefined) return undefined;
    candidates ??= got.total;
    for (const c of await casesOf(got.hits)) {
      if (!tags.every((t) => c.tags.includes(t))) continue;
      total++;
      if (cases.length < limit) cases.push(c);
    }
    offset += got.hits.length;
    if (got.hits.length < size || (!reading && cases.length >= limit)) break;
  }
  if (byMarks) total += Math.max(0, (candidates ?? offset) - offset);
  return { cases, total: count ? total : undefined };
}
