// The only place that loads chalk and cli-table3, and only when human output is being rendered.

export interface Style {
  readonly color: boolean;
  bold(text: string): string;
  dim(text: string): string;
  good(text: string): string;
  warn(text: string): string;
  bad(text: string): string;
  /** A table with a header row; cells are plain strings. */
  table(head: string[], rows: string[][]): string;
}

const plain = (text: string) => text;

export async function loadStyle(color: boolean): Promise<Style> {
  const { default: Table } = await import('cli-table3');
  let paint = { bold: plain, dim: plain, good: plain, warn: plain, bad: plain };
  if (color) {
    const { Chalk } = await import('chalk');
    const chalk = new Chalk({ level: 1 });
    paint = { bold: chalk.bold, dim: chalk.dim, good: chalk.green, warn: chalk.yellow, bad: chalk.red };
  }
  return {
    color,
    ...paint,
    table(head, rows) {
      const table = new Table({
        head: head.map((h) => paint.bold(h)),
        style: { head: [], border: [], compact: true },
        chars: color ? {} : { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
      });
      table.push(...rows);
      return table.toString();
    },
  };
}
