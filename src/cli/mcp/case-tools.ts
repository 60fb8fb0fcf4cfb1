// The case tools of `crux mcp` (SPEC §10.1): record, retrieve, list, show — procedural memory, "what worked
// before", with each case's action and outcome in the text a model reads.
import * as caseOps from '../operations/case';
import { renderCase, renderRecorded } from '../../output/case';
import { parseCaseId } from '../../shared/ids';
import { printableBlock } from '../../shared/printable';
import { parseRecordObject, type Case } from '../../domain/case/case';
import type { ScoredCase } from '../../domain/case/store';
import { DEFAULT_TOP_K } from '../../domain/case/rank';
import { ArgumentError, count, human, limit, limitOf, listOf, OBJECT, READS, tool, WRITES } from './tool';

// The text a model reads of cases: each one's action and outcome in full, where the CLI's table would cut them.
const indented = (text: string) => printableBlock(text).replace(/\n/g, '\n     ');

/** One case as a block: a head line, then task, context, action and outcome in full. */
function caseBlock(c: Case, rank: number, similarity?: number): string {
  const score = similarity === undefined ? '' : `similarity ${similarity.toFixed(3)}, `;
  const head = `${rank}. case ${c.case_id} (${score}${c.success ? 'succeeded' : 'failed'}, reward ${Math.round(c.reward * 1000) / 1000}, reused ${c.times_reused}×, ${c.created_at})`;
  const lines = [head, `   task: ${indented(c.task)}`];
  if (c.context !== null) lines.push(`   context: ${indented(c.context)}`);
  lines.push(`   action: ${indented(c.action)}`, `   outcome: ${indented(c.outcome)}`);
  if (c.tags.length > 0) lines.push(`   tags: ${c.tags.map((t) => printableBlock(t)).join(', ')}`);
  return lines.join('\n');
}

function retrievedText({ results }: { results: readonly ScoredCase[] }): string {
  if (results.length === 0) return 'no matching cases';
  const n = results.length;
  return [`${n} matching case${n === 1 ? '' : 's'}, best first:`, ...results.map((r, i) => caseBlock(r.case, i + 1, r.similarity))].join('\n');
}

function casesText({ cases }: { cases: readonly Case[] }): string {
  if (cases.length === 0) return 'no cases';
  const n = cases.length;
  return [`${n} case${n === 1 ? '' : 's'}, in the order written (case_show gives every field of one):`, ...cases.map((c, i) => caseBlock(c, i + 1))].join('\n');
}

// Every case tool reads or writes the one case bank: they are answered in the order received.
const CASES = ['cases'];
const CASE = { case: OBJECT };

export const caseRecord = tool({
  name: 'case_record',
  title: 'Record a case',
  description:
    'Remember what was done and how it turned out (procedural memory), like `crux case record`; case_retrieve finds it again by its task and tags. Credentials in URLs are removed from every text.',
  ...WRITES,
  input: (z) => ({
    task: z.string().describe('What was to be done: the retrieval key.'),
    action: z.string().describe('What was done.'),
    outcome: z.string().describe('How it turned out.'),
    context: z.string().optional().describe('The circumstances.'),
    success: z.boolean().optional().describe('Whether it worked (default true).'),
    reward: z.number().optional().describe('How well it worked, 0 to 1 (default 1; clamped).'),
    tags: z.array(z.string()).optional().describe('Tags, matched by case_retrieve like words of the task.'),
    source_receipt: z.string().optional().describe('A receipt of the source, e.g. the run or commit.'),
  }),
  output: CASE,
  touches: () => CASES,
  // The same parse as `crux case record --stdin`, which takes these fields as one JSON object.
  run: (ctx, args) => caseOps.recordCase(ctx, parseRecordObject(args)),
  text: async (document) => `recorded case ${await human(renderRecorded)(document)}`,
});

export const caseRetrieve = tool({
  name: 'case_retrieve',
  title: 'Retrieve similar cases',
  description:
    "The recorded cases whose task and tags share the most words with a query (Jaccard similarity), best first, like `crux case retrieve`: the text gives each one's task, action and outcome.",
  ...WRITES,
  input: (z) => ({
    task: z.string().describe('The query: a task description.'),
    top_k: count(z, `At most this many results (default ${DEFAULT_TOP_K}, at most 100).`).optional(),
    only_success: z.boolean().optional().describe('Leave out failed cases.'),
    min_similarity: z.number().optional().describe('Leave out matches below this similarity, 0 to 1.'),
    mark_reused: z.boolean().optional().describe('Count each returned case as reused (journaled).'),
  }),
  output: { results: { type: 'array', items: OBJECT } },
  touches: () => CASES,
  run: (ctx, args) => {
    const [topK, minSimilarity] = [args.top_k, args.min_similarity].map((n) => (n === undefined ? undefined : String(n)));
    const query = caseOps.retrieveQuery(args.task, { topK, minSimilarity, onlySuccess: args.only_success }, ['top_k', 'min_similarity']);
    return caseOps.retrieve(ctx, query, args.mark_reused === true);
  },
  text: retrievedText,
});

export const caseList = tool({
  name: 'case_list',
  title: 'List the recorded cases',
  description:
    "Every recorded case in the order written, like `crux case list`: successes or failures only, those with a tag, the first few. The text gives each one's task, action and outcome; case_show one case's every field.",
  ...READS,
  input: (z) => ({
    only_success: z.boolean().optional().describe('Only the cases that worked.'),
    only_failure: z.boolean().optional().describe('Only the cases that failed.'),
    tag: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe('Only cases with this tag (a list: with every one of them).'),
    limit: limit(z, 'cases, the first written'),
  }),
  output: { cases: { type: 'array', items: OBJECT } },
  touches: () => CASES,
  run: async (ctx, args) => {
    if (args.only_success === true && args.only_failure === true) throw new ArgumentError('give only_success or only_failure, not both');
    const success = args.only_success === true ? true : args.only_failure === true ? false : undefined;
    return caseOps.listCases(ctx, { success, tags: listOf(args.tag) }, { limit: limitOf(args.limit) });
  },
  text: casesText,
});

export const caseShow = tool({
  name: 'case_show',
  title: 'Show one case',
  description: 'One recorded case with every field (task, context, action, outcome, success, reward, tags, receipt, times reused), like `crux case show`.',
  ...READS,
  input: (z) => ({ case_id: z.string().describe('The case id, as case_record, case_retrieve and case_list give it (c_…).') }),
  output: CASE,
  touches: () => CASES,
  run: (ctx, args) => caseOps.showCase(ctx, parseCaseId(args.case_id)),
  text: human(renderCase),
});
