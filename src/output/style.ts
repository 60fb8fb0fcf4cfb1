// The only place that loads chalk, and only when human output is being rendered; what a renderer is given
// to paint text, draw tables and show times and sizes for the medium stdout is (a terminal or a pipe).
import { humanBytes, relativeTime } from './humanize';
import { NONE, tableLines, type CellValue, type Column, type Paint, type TableLayout, type Tone } from './table';
import { layoutFor, stdoutIsTerminal, terminalColumns } from './terminal';

export interface Style {
  readonly color: boolean;
  /** Stdout is a terminal: box-drawn tables, relative times and human sizes; a pipe gets exact values. */
  readonly terminal: boolean;
  /** The columns a line may take: the terminal's (or COLUMNS); undefined piped (nothing is cut or wrapped). */
  readonly width: number | undefined;
  bold(text: string): string;
  dim(text: string): string;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  /** A table's lines; cells are plain text (escaped and cut here) or text with a tone. */
  table(columns: readonly (string | Column)[], rows: Iterable<readonly CellValue[]>): Iterable<string>;
  /** A stored time as people read it: `5m ago` / `in 2h` on a terminal, the exact time piped; `-` (NONE) for none. */
  when(iso: string | null | undefined): string;
  /** A byte count: `45.8 MB` on a terminal, exact piped. */
  size(bytes: number): string;
}

const plain = (text: string) => text;

/** A style from its parts (the unit tests' entry point: no terminal or chalk involved). */
export function makeStyle(paints: Record<Tone, (text: string) => string>, layout: TableLayout, color: boolean, now: number): Style {
  const paint: Paint = (tone, text) => paints[tone](text);
  const terminal = layout.box;
  return {
    color,
    terminal,
    width: layout.width,
    ...paints,
    table: (columns, rows) => tableLines(columns, rows, layout, paint),
    when: (iso) => (iso === null || iso === undefined ? NONE : terminal ? relativeTime(iso, now) : iso),
    size: (bytes) => (terminal ? humanBytes(bytes) : String(bytes)),
  };
}

export const PLAIN_PAINTS: Record<Tone, (text: string) => string> = { bold: plain, dim: plain, good: plain, warn: plain, bad: plain };

export async function loadStyle(opts: { color: boolean; now?: number | undefined; env?: NodeJS.ProcessEnv; headers?: boolean | undefined }): Promise<Style> {
  let paints = PLAIN_PAINTS;
  if (opts.color) {
    const { Chalk } = await import('chalk');
    const chalk = new Chalk({ level: 1 });
    paints = { bold: chalk.bold, dim: chalk.dim, good: chalk.green, warn: chalk.yellow, bad: chalk.red };
  }
  const terminal = stdoutIsTerminal();
  const layout = layoutFor(terminal, opts.env ?? process.env, terminal ? terminalColumns() : undefined, opts.headers !== false);
  return makeStyle(paints, layout, opts.color, opts.now ?? Date.now());
}
