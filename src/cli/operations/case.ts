// Case operations as every adapter runs them (CLI, MCP, hooks): the `--json` document of each (SPEC §8).
import type { Context } from '../context';
import { newId, type CaseId } from '../../shared/ids';
import { randomBytes } from '../../shared/random';
import { nameCommit } from '../../shared/commit-log';
import type { Case, CaseDraft } from '../../domain/case/case';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK, type RetrieveQuery } from '../../domain/case/rank';
import { listCases as list, recordCase as record, retrieveCases, retrieveTaggedCases, showCase as show } from '../../domain/case/store';
import { COLUMN_ORDERS, newestCases, sortedCases, type ColumnOrder } from '../../domain/case/newest';
import { CASE_ORDERS, windowOf, type SortSpec } from '../../domain/list-window';
import { caseScope } from './scope';

export async function recordCase(ctx: Context, draft: CaseDraft) {
  const recorded = await record(caseScope(ctx), draft, newId<CaseId>('c', randomBytes(12)));
  nameCommit(`recorded case ${recorded.case_id}`);
  return { case: recorded };
}

/** A retrieve's query from a command line's or a tool's arguments (`names`: how its refusals name the two numbers). */
export const retrieveQuery = (text: string, given: { topK?: string; minSimilarity?: string; onlySuccess?: boolean }, names: string[] = []): RetrieveQuery => ({
  text,
  topK: given.topK === undefined ? DEFAULT_TOP_K : parseTopK(given.topK, names[0]),
  onlySuccess: given.onlySuccess === true,
  minSimilarity: given.minSimilarity === undefined ? 0 : parseMinSimilarity(given.minSimilarity, names[1]),
});

export async function retrieve(ctx: Context, query: RetrieveQuery, markReused: boolean) {
  return { results: await retrieveCases(caseScope(ctx), query, markReused) };
}

/** The best matches among the cases tagged `tag` (a project): SessionStart's for a resumed session. */
export async function retrieveTagged(ctx: Context, query: RetrieveQuery, tag: string) {
  return { results: await retrieveTaggedCases(caseScope(ctx), query, tag) };
}

export async function showCase(ctx: Context, id: CaseId) {
  return { case: await show(caseScope(ctx), id) };
}

export interface CaseFilter {
  /** Only successes (true), only failures (false), or both. */
  readonly success?: boolean | undefined;
  /** Only cases with every one of these tags. */
  readonly tags?: readonly string[] | undefined;
}

type CaseWindow = { sort?: SortSpec<keyof typeof CASE_ORDERS> | undefined; limit?: number | undefined };

/** `case list`: every case newest first (the reverse of the order written), filtered, then sorted and cut by the window. */
export async function listCases(ctx: Context, filter: CaseFilter, window: CaseWindow = {}) {
  // The document alone: a limited list by tag need not count every tagged case.
  return (await countedCases(ctx, filter, window, { count: false })).document;
}

/**
 * As listCases, with how many cases matched, shown or not (a list cut short says how many more there are);
 * without `count`, a limited list by tag may leave `total` undefined rather than read every tagged case.
 */
export async function countedCases(ctx: Context, filter: CaseFilter, window: CaseWindow = {}, opts: { count?: boolean } = {}) {
  const { success, tags = [] } = filter;
  // Newest first and limited: only the cases shown are read (the bank's columns and postings choose them).
  if (window.sort === undefined && window.limit !== undefined) {
    const { cases, total } = await newestCases(caseScope(ctx), { success, tags }, window.limit, opts.count ?? true);
    return { document: { cases }, total };
  }
  // Sorted by a number the bank holds (the dashboard's newest by created_at) and limited: the same, by that column.
  const sort = window.sort;
  if (sort !== undefined && window.limit !== undefined && COLUMN_ORDERS.has(sort.key)) {
    const sorted = await sortedCases(caseScope(ctx), { success, tags }, sort as SortSpec<ColumnOrder>, window.limit, opts.count ?? true);
    if (sorted !== undefined) return { document: { cases: sorted.cases }, total: sorted.total };
  }
  const where =
    success === undefined && tags.length === 0
      ? undefined
      : (c: Case) => (success === undefined || c.success === success) && tags.every((t) => c.tags.includes(t));
  // Ties of --sort keep the newest-first order too.
  const { rows, total } = windowOf((await list(caseScope(ctx))).toReversed(), CASE_ORDERS, { ...window, where });
  return { document: { cases: rows }, total };
}
