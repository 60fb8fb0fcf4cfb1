// Human renderings of case results: tables for lists and matches, sentences for single changes.
import type { Case } from '../domain/case/case';
import type { ImportSummary, ScoredCase } from '../domain/case/store';
import { printable, printableBlock } from '../shared/printable';
import type { Style } from './style';
import { unlessEmpty, type CellValue } from './table';

const CELL_CHARS = 60;

/** On a terminal at most CELL_CHARS characters, so a long task keeps a table readable; piped, all of it. */
export function cell(text: string, style: Pick<Style, 'terminal'>): string {
  // No more UTF-16 units than characters allowed: nothing to cut (the table flattens whitespace itself).
  if (!style.terminal || text.length <= CELL_CHARS) return text;
  let out = '';
  let n = 0;
  for (const c of text.replace(/\s+/g, ' ').trim()) {
    if (++n === CELL_CHARS) return `${out}…`;
    out += c;
  }
  return out;
}

const yesNo = (success: boolean): CellValue => (success ? { text: 'yes', tone: 'good' } : { text: 'no', tone: 'bad' });
const number = (x: number) => String(Math.round(x * 1000) / 1000);

export const renderRecorded = ({ case: c }: { case: Case }): string => printable(c.case_id);

export function* renderRetrieved({ results }: { results: readonly ScoredCase[] }, style: Style): Generator<string> {
  if (results.length === 0) {
    yield 'no matching cases';
    return;
  }
  yield* style.table(
    ['similarity', { title: 'task', flex: true }, { title: 'outcome', flex: true }, 'success', { title: 'reward', optional: true }, { title: 'reused', optional: true }, 'id'],
    results.map(({ similarity, case: c }): CellValue[] => [
      similarity.toFixed(3),
      cell(c.task, style),
      cell(c.outcome, style),
      yesNo(c.success),
      number(c.reward),
      String(c.times_reused),
      { text: c.case_id, tone: 'dim' },
    ]),
  );
}

export function* renderCaseList({ cases }: { cases: Iterable<Case> }, style: Style): Generator<string> {
  const rows = function* (): Generator<CellValue[]> {
    for (const c of cases) yield [c.case_id, style.when(c.created_at), cell(c.task, style), yesNo(c.success), number(c.reward), String(c.times_reused)];
  };
  const shown = unlessEmpty(rows());
  if (shown === undefined) yield 'no cases';
  else yield* style.table(['id', 'created', { title: 'task', flex: true }, 'success', { title: 'reward', optional: true }, { title: 'reused', optional: true }], shown);
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
