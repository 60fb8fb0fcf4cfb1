// Case operations as every adapter runs them (CLI, MCP, hooks): the `--json` document of each (SPEC §8).
import type { Context } from '../context';
import { newId, type CaseId } from '../../shared/ids';
import type { CaseDraft } from '../../domain/case/case';
import type { RetrieveQuery } from '../../domain/case/rank';
import { recordCase as record, retrieveCases } from '../../domain/case/store';
import { caseScope } from './scope';

export async function recordCase(ctx: Context, draft: CaseDraft) {
  return { case: await record(caseScope(ctx), draft, newId<CaseId>('c')) };
}

export async function retrieve(ctx: Context, query: RetrieveQuery, markReused: boolean) {
  return { results: await retrieveCases(caseScope(ctx), query, markReused) };
}
