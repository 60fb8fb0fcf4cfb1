// The text content of the MCP tools where the CLI's table would hide what a model acts on: each case's
// action and outcome (a table cuts them), and the damage a replay passed over.
import type { Case } from '../../domain/case/case';
import type { ScoredCase } from '../../domain/case/store';
import type { JournalWarning } from '../../output/emit';
import { printableBlock } from '../../shared/printable';

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

export function retrievedText({ results }: { results: readonly ScoredCase[] }): string {
  if (results.length === 0) return 'no matching cases';
  const n = results.length;
  return [`${n} matching case${n === 1 ? '' : 's'}, best first:`, ...results.map((r, i) => caseBlock(r.case, i + 1, r.similarity))].join('\n');
}

export function casesText({ cases }: { cases: readonly Case[] }): string {
  if (cases.length === 0) return 'no cases';
  const n = cases.length;
  return [`${n} case${n === 1 ? '' : 's'}, in the order written (case_show gives every field of one):`, ...cases.map((c, i) => caseBlock(c, i + 1))].join('\n');
}

/** What a person sees on stderr when a replay passes over damage, as lines under the text. */
export const warningsText = (warnings: readonly JournalWarning[]): string =>
  warnings.map((w) => `warning: ${w.file}:${w.line}: ${w.reason} (passed over; journal_check shows every problem)`).join('\n');
