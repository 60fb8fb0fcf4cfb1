// Case operations as every adapter runs them (CLI, MCP, hooks): the `--json` document of each (SPEC §8).
import type { Context } from '../context';
import { newId, type CaseId } from '../../shared/ids';
import type { CaseDraft } from '../../domain/case/case';
import { MAX_TOP_K, type RetrieveQuery } from '../../domain/case/rank';
import { recordCase as record, retrieveCases } from '../../domain/case/store';
import { caseScope } from './scope';

export async function recordCase(ctx: Context, draft: CaseDraft) {
  return { case: await record(caseScope(ctx), draft, newId<CaseId>('c')) };
}

export async function retrieve(ctx: Context, query: RetrieveQuery, markReused: boolean) {
  return { results: await retrieveCases(caseScope(ctx), query, markReused) };
}

/** The best matches among the cases tagged `tag` (a project): of the MAX_TOP_K best overall, those with the tag. */
export async function retrieveTagged(ctx: Context, query: RetrieveQuery, tag: string) {
  const { results } = await retrieve(ctx, { ...query, topK: MAX_TOP_K }, false);
  return { results: results.filter((r) => r.case.tags.includes(tag)).slice(0, query.topK) };
}
