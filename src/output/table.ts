// Tables as a stream of lines: column widths from the header and a bounded sample of rows, fitted to a
// width; box-drawn on a terminal, plain aligned columns (one row a line, no box characters) when piped.
// Rows are any iterable, so a list of 100k entries is rendered as it is read, never held as one table.
import { printable } from '../shared/printable';
import { cutToWidth, displayWidth, padToWidth } from './text-width';

export type Tone = 'bold' | 'dim' | 'good' | 'warn' | 'bad';
export interface Cell {
  readonly text: string;
  readonly tone?: Tone | undefined;
}
export type CellValue = string | Cell;

export interface Column {
  readonly title: string;
  /** Free text (a task, a path): cut first when the table is too wide, down to FLEX_MIN columns. */
  readonly flex?: boolean;
  /** Left out (the whole column, every row) when the table cannot fit otherwise; the rightmost goes first. */
  readonly optional?: boolean;
}

export interface TableLayout {
  /** Box-drawn (a terminal) or plain aligned columns (a pipe). */
  readonly box: boolean;
  /** The columns a line may take; undefined: no limit (piped without COLUMNS). */
  readonly width: number | undefined;
}

export type Paint = (tone: Tone, text: string) => string;

/** Rows measured before the first line is written; later rows are cut to the widths these gave. */
export const SAMPLE_ROWS = 500;
const FLEX_MIN = 10;

interface Prepared {
  readonly text: string;
  readonly width: number;
  readonly tone: Tone | undefined;
}

const WHITESPACE = /\s+/g;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const spaced = (text: string) => text.includes('  ') || text.startsWith(' ') || text.endsWith(' ');

/** One line of printable text: runs of whitespace (newlines too) become one space, controls are escaped. */
function prepare(value: CellValue, plain: boolean): Prepared {
  const raw = typeof value === 'string' ? value : value.text;
  const tone = typeof value === 'string' ? undefined : value.tone;
  // The usual cell, printable ASCII, costs one scan: no control to escape, no wide character to measure.
  if (PRINTABLE_ASCII.test(raw) && raw !== '') {
    const text = spaced(raw) ? raw.replace(WHITESPACE, ' ').trim() : raw;
    if (text !== '') return { text, width: text.length, tone };
  }
  let text = printable(raw.replace(WHITESPACE, ' ').trim());
  // An empty cell in plain columns would shift awk's fields.
  if (plain && text === '') text = '-';
  return { text, width: displayWidth(text), tone };
}

/**
 * Shrinks `widths` (in place) until they sum to at most `available`: the columns in `which` are capped at
 * one common width (the widest cut first), never below their minimum.
 */
function capColumns(widths: number[], which: number[], minimum: (i: number) => number, available: number): void {
  const total = () => widths.reduce((a, b) => a + b, 0);
  if (total() <= available || which.length === 0) return;
  const fixed = total() - which.reduce((a, i) => a + widths[i]!, 0);
  const capped = (cap: number) => which.reduce((a, i) => a + Math.max(minimum(i), Math.min(widths[i]!, cap)), 0);
  let [lo, hi] = [0, Math.max(...which.map((i) => widths[i]!))];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fixed + capped(mid) <= available) lo = mid;
    else hi = mid - 1;
  }
  const before = which.map((i) => widths[i]!);
  for (const i of which) widths[i] = Math.max(minimum(i), Math.min(widths[i]!, lo));
  // Columns the cap cut get the columns left over, one each, left to right.
  let spare = available - total();
  which.forEach((i, k) => {
    if (spare > 0 && widths[i]! < before[k]!) {
      widths[i]! += 1;
      spare -= 1;
    }
  });
}

/**
 * The columns shown and their widths, fitted to `layout.width` when it can be met: free-text columns give
 * way first (down to FLEX_MIN), then optional columns are left out, then every column is cut.
 */
export function fitColumns(natural: readonly number[], columns: readonly Column[], layout: TableLayout): { shown: number[]; widths: number[] } {
  let shown = natural.map((_, i) => i);
  if (layout.width === undefined) return { shown, widths: [...natural] };
  for (;;) {
    const widths = shown.map((i) => natural[i]!);
    const n = shown.length;
    const available = layout.width - (layout.box ? 3 * n + 1 : 2 * (n - 1));
    const flex = shown.flatMap((i, k) => (columns[i]!.flex ? [k] : []));
    capColumns(widths, flex, (k) => Math.min(natural[shown[k]!]!, FLEX_MIN), available);
    const optional = shown.filter((i) => columns[i]!.optional);
    if (widths.reduce((a, b) => a + b, 0) > available && optional.length > 0) {
      shown = shown.filter((i) => i !== optional.at(-1));
      continue;
    }
    capColumns(widths, widths.map((_, k) => k), () => 1, available);
    return { shown, widths };
  }
}

/** The lines of a table (without newlines): header, then one line per row. */
export function* tableLines(
  spec: readonly (string | Column)[],
  rows: Iterable<readonly CellValue[]>,
  layout: TableLayout,
  paint: Paint,
): Generator<string> {
  const columns = spec.map((c) => (typeof c === 'string' ? { title: c } : c));
  const plain = !layout.box;
  const iterator = rows[Symbol.iterator]();
  const sample: Prepared[][] = [];
  for (let next = iterator.next(); ; next = iterator.next()) {
    if (next.done) break;
    sample.push(next.value.map((v) => prepare(v, plain)));
    if (sample.length === SAMPLE_ROWS) break;
  }
  const head = columns.map((c) => prepare({ text: c.title, tone: 'bold' }, plain));
  const natural = head.map((h, i) => sample.reduce((w, row) => Math.max(w, row[i]?.width ?? 0), h.width));
  const { shown, widths } = fitColumns(natural, columns, layout);
  const cut = layout.box || layout.width !== undefined;
  const last = widths.length - 1;

  const line = (cells: readonly Prepared[]): string => {
    const parts = widths.map((w, k) => {
      const i = shown[k]!;
      const cell = cells[i] ?? prepare('', plain);
      const text = cut && cell.width > w ? cutToWidth(cell.text, w) : cell.text;
      const width = text === cell.text ? cell.width : displayWidth(text);
      // Paint the text only, so every colour is reset before the padding and the newline.
      const painted = cell.tone === undefined ? text : paint(cell.tone, text);
      return !layout.box && k === last ? painted : padToWidth(painted, w, width);
    });
    return layout.box ? `│ ${parts.join(' │ ')} │` : parts.join('  ');
  };
  const rule = (left: string, mid: string, right: string) => `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;

  if (layout.box) yield rule('┌', '┬', '┐');
  yield line(head);
  if (layout.box) yield rule('├', '┼', '┤');
  for (const row of sample) yield line(row);
  for (let next = iterator.next(); !next.done; next = iterator.next()) yield line(next.value.map((v) => prepare(v, plain)));
  if (layout.box) yield rule('└', '┴', '┘');
}

/** `rows` unchanged, or undefined when it has none (peeks at the first row without losing it). */
export function unlessEmpty<T>(rows: Iterable<T>): Iterable<T> | undefined {
  const iterator = rows[Symbol.iterator]();
  const first = iterator.next();
  if (first.done) return undefined;
  return (function* () {
    yield first.value;
    for (let next = iterator.next(); !next.done; next = iterator.next()) yield next.value;
  })();
}
