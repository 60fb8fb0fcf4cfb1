// Human renderings of case results: tables for lists and matches, sentences for single changes.
import type { Case } from '../domain/case/case';
import type { ImportSummary, ScoredCase } from '../domain/case/store';
import type { Style } from './style';

const CELL_CHARS = 60;

/** One line, at most CELL_CHARS characters, so a long task keeps a table readable. */
export function cell(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= CELL_CHARS ? flat : `${chars.slice(0, CELL_CHARS - 1).join('')}…`;
}

const yesNo = (style: Style, success: boolean) => (success ? style.good('yes') : style.bad('no'));
const number = (x: number) => String(Math.round(x * 1000) / 1000);

export const renderRecorded = ({ case: c }: { case: Case }): string => c.case_id;

export function renderRetrieved({ results }: { results: readonly ScoredCase[] }, style: Style): string {
  if (results.length === 0) return 'no matching cases';
  return style.table(
    ['similarity', 'task', 'outcome', 'success', 'reward', 'reused', 'id'],
    results.map(({ similarity, case: c }) => [
      similarity.toFixed(3),
      cell(c.task),
      cell(c.outcome),
      yesNo(style, c.success),
      number(c.reward),
      String(c.times_reused),
      style.dim(c.case_id),
    ]),
  );
}

export function renderCaseList({ cases }: { cases: readonly Case[] }, style: Style): string {
  if (cases.length === 0) return 'no cases';
  return style.table(
    ['id', 'created', 'task', 'success', 'reward', 'reused'],
    cases.map((c) => [c.case_id, c.created_at, cell(c.task), yesNo(style, c.success), number(c.reward), String(c.times_reused)]),
  );
}

export function renderCase({ case: c }: { case: Case }): string {
  const rows: [string, string | null][] = [
    ['case_id', c.case_id],
    ['task', c.task],
    ['context', c.context],
    ['action', c.action],
    ['outcome', c.outcome],
    ['success', c.success ? 'yes' : 'no'],
    ['reward', String(c.reward)],
    ['tags', c.tags.length === 0 ? null : c.tags.join(', ')],
    ['source_receipt', c.source_receipt],
    ['created_at', c.created_at],
    ['times_reused', String(c.times_reused)],
  ];
  // Multi-line text is indented under its label so every line stays attributable.
  return rows
    .filter(([, value]) => value !== null)
    .map(([label, value]) => `${`${label}:`.padEnd(16)}${value!.replace(/\n/g, `\n${' '.repeat(16)}`)}`)
    .join('\n');
}

export const renderDeleted = ({ deleted }: { deleted: string }): string => `deleted case ${deleted}`;

export const renderImported = (summary: ImportSummary): string =>
  `imported ${summary.imported} case${summary.imported === 1 ? '' : 's'} (${summary.created} new, ${summary.replaced} replaced)`;
