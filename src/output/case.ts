// Human renderings of case results: tables for lists and matches, sentences for single changes.
import type { Case } from '../domain/case/case';
import type { ImportSummary, ScoredCase } from '../domain/case/store';
import { printable, printableBlock } from '../shared/printable';
import type { Style } from './style';
import { moreLine, type CellValue } from './table';

const yesNo = (success: boolean): CellValue => (success ? { text: 'yes', tone: 'good' } : { text: 'no', tone: 'bad' });
const number = (x: number) => String(Math.round(x * 1000) / 1000);

export const renderRecorded = ({ case: c }: { case: Case }): string => printable(c.case_id);
/** What --quiet prints of `case record`: the new case's id. */
export const recordedId = ({ case: c }: { case: Case }): string[] => [c.case_id];

/** The matches, best first: what was done (the action) beside the task, and each case's id whole. */
export function* renderRetrieved({ results }: { results: readonly ScoredCase[] }, style: Style): Generator<string> {
  if (results.length === 0) {
    yield 'no matching cases';
    return;
  }
  yield* style.table(
    [
      'similarity',
      { title: 'id', id: true },
      { title: 'task', flex: true },
      { title: 'action', flex: true },
      'success',
      { title: 'outcome', flex: true, optional: true },
      { title: 'reward', optional: true },
      { title: 'reused', optional: true },
    ],
    results.map(({ similarity, case: c }): CellValue[] => [
      similarity.toFixed(3),
      c.case_id,
      c.task,
      c.action,
      yesNo(c.success),
      c.outcome,
      number(c.reward),
      String(c.times_reused),
    ]),
  );
}

/** What --quiet prints of a retrieval: the case ids, best first. */
export const retrievedIds = ({ results }: { results: readonly ScoredCase[] }): string[] => results.map((r) => r.case.case_id);

/** The cases (streamed), newest first unless --sort said otherwise; on a terminal a last line when cut short. */
export function* renderCaseList({ cases, total }: { cases: readonly Case[]; total?: number }, style: Style): Generator<string> {
  if (cases.length === 0) {
    yield 'no cases';
    return;
  }
  yield* style.table(
    [{ title: 'id', id: true }, 'created', { title: 'task', flex: true }, 'success', { title: 'reward', optional: true }, { title: 'reused', optional: true }],
    cases.map((c): CellValue[] => [c.case_id, style.when(c.created_at), c.task, yesNo(c.success), number(c.reward), String(c.times_reused)]),
  );
  const more = style.terminal ? moreLine(cases.length, total, 'case') : undefined;
  if (more !== undefined) yield style.dim(more);
}

/** What --quiet prints of a list: the case ids. */
export const caseIds = ({ cases }: { cases: readonly Case[] }): string[] => cases.map((c) => c.case_id);

export function renderCase({ case: c }: { case: Case }): string {
  const rows: [string, string | null][] = [
    ['case_id', c.case_id],
    ['task', c.task],
    ['context', c.context],
    ['action', c.action],
    ['outcome', c.outcome],
    ['success', c.success ? 'yes' : 'no'],
    ['reward', String(c.reward)],
    ['tags', c.tags.length === 0 ? null : c.tags.map(printable).join(', ')],
    ['source_receipt', c.source_receipt],
    ['created_at', c.created_at],
    ['times_reused', String(c.times_reused)],
  ];
  // Multi-line text is indented under its label so every line stays attributable.
  return rows
    .filter(([, value]) => value !== null)
    .map(([label, value]) => `${`${label}:`.padEnd(16)}${printableBlock(value!).replace(/\n/g, `\n${' '.repeat(16)}`)}`)
    .join('\n');
}

export const renderDeleted = ({ deleted }: { deleted: string }): string => `deleted case ${printable(deleted)}`;

export const renderImported = (summary: ImportSummary): string =>
  `imported ${summary.imported} case${summary.imported === 1 ? '' : 's'} (${summary.created} new, ${summary.replaced} replaced)`;
