// Tables as a stream of lines. On a terminal: box-drawn, fitted to its width (free text cut first, optional
// and empty columns left out, ids never cut), column widths from a bounded sample of rows. Piped: tab-separated
// values, one header line of one-word names, nothing cut, a tab or newline inside a cell escaped (`\t`, `\n`).
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
  /** Its header piped: one word (`state_bytes`); by default the title, lower case, its spaces as `_`. */
  readonly name?: string;
  /** Free text (a task, a path): cut first when the table is too wide, down to FLEX_MIN columns. */
  readonly flex?: boolean;
  /** Left out (the whole column, every row) when the table cannot fit otherwise; the rightmost goes first. */
  readonly optional?: boolean;
  /** An id: never cut, unless the width cannot hold it even with every other column at one character. */
  readonly id?: boolean;
}

export interface TableLayout {
  /** A terminal (box-drawn, fitted to `width`) or a pipe (tab-separated, nothing cut). */
  readonly box: boolean;
  /** The columns a line may take on a terminal; undefined piped. */
  readonly width: number | undefined;
  /** The header line (`--no-headers` leaves it out); shown unless false. */
  readonly headers?: boolean | undefined;
}

export type Paint = (tone: Tone, text: string) => string;

/** Rows measured before the first line is written; later rows are cut to the widths these gave. */
export const SAMPLE_ROWS = 500;
const FLEX_MIN = 10;
/** What a cell shows for a value that is not there, in every table (the tab-separated form too). */
export const NONE = '-';

interface Prepared {
  readonly text: string;
  readonly width: number;
  readonly tone: Tone | undefined;
}

const WHITESPACE = /\s+/g;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const spaced = (text: string) => text.includes('  ') || text.startsWith(' ') || text.endsWith(' ');

/** A terminal cell: one line of printable text (runs of whitespace, newlines too, become one space). */
function prepare(value: CellValue): Prepared {
  const raw = typeof value === 'string' ? value : value.text;
  const tone = typeof value === 'string' ? undefined : value.tone;
  // The usual cell, printable ASCII, costs one scan: no control to escape, no wide character to measure.
  if (PRINTABLE_ASCII.test(raw)) {
    const text = spaced(raw) ? raw.replace(WHITESPACE, ' ').trim() : raw;
    return { text, width: text.length, tone };
  }
  const text = printable(raw.replace(WHITESPACE, ' ').trim());
  return { text, width: displayWidth(text), tone };
}

/** A tab-separated field: every control escaped, tabs and newlines included, so fields and rows stay whole. */
const field = (value: CellValue): string => printable(typeof value === 'string' ? value : value.text);

/** A column's header piped: `last write` → `last_write`, `from → to` → `from_to`. */
const headerName = (c: Column): string =>
  c.name ??
  c.title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

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
 * way first (down to FLEX_MIN), then optional columns are left out, then every column but the ids is cut,
 * and the ids only when even that is not enough. `empty` columns (nothing in any row) are never shown.
 */
export function fitColumns(
  natural: readonly number[],
  columns: readonly Column[],
  layout: TableLayout,
  empty: readonly boolean[] = [],
): { shown: number[]; widths: number[] } {
  let shown = natural.map((_, i) => i).filter((i) => !empty[i]);
  if (layout.width === undefined) return { shown, widths: shown.map((i) => natural[i]!) };
  for (;;) {
    const widths = shown.map((i) => natural[i]!);
    const n = shown.length;
    // A box-drawn line: `│ ` before each cell, ` │` after the last, ` │ ` between.
    const available = layout.width - (3 * n + 1);
    const flex = shown.flatMap((i, k) => (columns[i]!.flex ? [k] : []));
    capColumns(widths, flex, (k) => Math.min(natural[shown[k]!]!, FLEX_MIN), available);
    const optional = shown.filter((i) => columns[i]!.optional);
    if (widths.reduce((a, b) => a + b, 0) > available && optional.length > 0) {
      shown = shown.filter((i) => i !== optional.at(-1));
      continue;
    }
    // Then every column but the ids, and at last the ids too.
    const notIds = shown.flatMap((i, k) => (columns[i]!.id ? [] : [k]));
    capColumns(widths, notIds, () => 1, available);
    capColumns(widths, Array.from(widths.keys()), () => 1, available);
    return { shown, widths };
  }
}

/** The lines of a table (without newlines): header, then one line per row. */
export function* tableLines(spec: readonly (string | Column)[], rows: Iterable<readonly CellValue[]>, layout: TableLayout, paint: Paint): Generator<string> {
  const columns = spec.map((c) => (typeof c === 'string' ? { title: c } : c));
  const headers = layout.headers !== false;
  if (!layout.box) {
    if (headers) yield columns.map(headerName).join('\t');
    // Tones are kept (colour piped only when asked for: --color=always into less -R).
    for (const row of rows) yield columns.map((_, i) => (row[i] === undefined ? '' : paintCell(row[i]!, field(row[i]!), paint))).join('\t');
    return;
  }
  const iterator = rows[Symbol.iterator]();
  const sample: Prepared[][] = [];
  for (let next = iterator.next(); ; next = iterator.next()) {
    if (next.done) break;
    sample.push(next.value.map(prepare));
    if (sample.length === SAMPLE_ROWS) break;
  }
  const head = columns.map((c) => prepare({ text: c.title, tone: 'bold' }));
  const natural = head.map((h, i) => sample.reduce((w, row) => Math.max(w, row[i]?.width ?? 0), headers ? h.width : 1));
  const empty = columns.map((_, i) => sample.length > 0 && sample.every((row) => row[i] === undefined || row[i]!.text === '' || row[i]!.text === NONE));
  const { shown, widths } = fitColumns(natural, columns, layout, empty);
  const blank = prepare('');

  const line = (cells: readonly Prepared[]): string => {
    const parts = widths.map((w, k) => {
      const cell = cells[shown[k]!] ?? blank;
      const text = cell.width > w ? cutToWidth(cell.text, w) : cell.text;
      const width = text === cell.text ? cell.width : displayWidth(text);
      return padToWidth(paintCell(cell, text, paint), w, width);
    });
    return `│ ${parts.join(' │ ')} │`;
  };
  const rule = (left: string, mid: string, right: string) => `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;

  yield rule('┌', '┬', '┐');
  if (headers) {
    yield line(head);
    yield rule('├', '┼', '┤');
  }
  for (const row of sample) yield line(row);
  for (let next = iterator.next(); !next.done; next = iterator.next()) yield line(next.value.map(prepare));
  yield rule('└', '┴', '┘');
}

// Paint the text only, so every colour is reset before the padding, the tab and the newline.
const paintCell = (cell: CellValue | Prepared, text: string, paint: Paint) =>
  typeof cell === 'string' || cell.tone === undefined ? text : paint(cell.tone, text);

/**
 * The line that ends a list cut short (on a terminal, where lists stop at 50 rows): how many more there are
 * and how to see them; undefined when nothing was left out.
 */
export function moreLine(shown: number, total: number | undefined, noun: string): string | undefined {
  if (total === undefined || total <= shown) return undefined;
  const more = total - shown;
  return `… ${more} more ${noun}${more === 1 ? '' : 's'} (${shown} of ${total} shown: --limit <n> shows n, --limit 0 shows all)`;
}
