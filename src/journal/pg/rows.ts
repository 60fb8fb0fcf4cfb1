// Verifying a journal's rows as replay verifies a file's lines, through the same ChainVerifier (verify.ts): each
// row's own hash, its place in the chain and the sequence, the vocabulary, batches. Never throws.
import type { ChainHead } from '../codec/record';
import { ChainVerifier, type LinePosition, type RecordSink } from '../codec/verify';
import type { Sql } from './client';

/** A row as read: its line number in the journal and its bytes (the record's line without `\n`). */
export interface Row {
  readonly line: number;
  readonly body: string;
}

export interface RowProblem {
  readonly line: number;
  readonly reason: string;
  /** True when the row is not applied (its bytes are unusable); false for chain and sequence findings. */
  readonly skipped: boolean;
  /** The row's bytes (without `\n`). */
  readonly length: number;
}

export interface RowScan {
  readonly records: number;
  readonly lines: number;
  readonly bytes: number;
  readonly problems: RowProblem[];
  readonly head: ChainHead;
  readonly headAt?: LinePosition;
  /** The line of the last row visited (verified or not): the next row goes after it. */
  readonly lastLine: number;
}

/** Where a row is, in the terms the journal layer uses for a line (rows have no byte offsets: the offset is the line). */
export const rowPosition = (line: number, body: string): LinePosition => ({ line, offset: line, length: Buffer.byteLength(body) });

/** Verifies rows in line order, handing each record that verifies to `sink`. */
export class RowVerifier {
  private readonly chain: ChainVerifier;
  private lines = 0;
  private bytes = 0;
  private lastLine = 0;

  /**
   * `from`: the head before the first row visited, when the rows before it are known (a snapshot's tail).
   * `history`: the rows are history rows (a snapshot's restatements may be left out, verify.ts).
   */
  constructor(vocabulary: ReadonlySet<string>, sink: RecordSink, from?: ChainHead, history = false) {
    this.chain = new ChainVerifier(vocabulary, sink, from, history);
  }

  visit(row: Row): void {
    const at = rowPosition(row.line, row.body);
    this.lines += 1;
    this.bytes += at.length + 1;
    this.lastLine = row.line;
    this.chain.visit(row.body, at);
  }

  /** Rows visited so far (for progress). */
  get visited(): number {
    return this.lines;
  }

  /**
   * The outcome. A batch still open at the end cannot be a write in progress (a transaction commits all of its
   * rows or none): it is damage, reported at its first row.
   */
  finish(): RowScan {
    const verified = this.chain.finish();
    const problems: RowProblem[] = verified.problems.map(({ line, reason, skipped, length }) => ({ line, reason, skipped, length }));
    if (verified.open !== undefined) {
      const { at, seen, want } = verified.open;
      problems.push({ line: at.line, reason: `incomplete batch (${seen} of ${want} records)`, skipped: true, length: at.length });
    }
    return {
      records: verified.records,
      lines: this.lines,
      bytes: this.bytes,
      lastLine: this.lastLine,
      problems,
      head: verified.head,
      ...(verified.headAt ? { headAt: verified.headAt } : {}),
    };
  }
}

/** Visits the rows `query` selects (line, body), in order, through a cursor of 5,000 rows; `batch` after each. */
export async function visitRows(q: Sql, query: string, params: unknown[], verifier: RowVerifier, batch?: () => void): Promise<void> {
  await q
    .unsafe(query, params as never[])
    .values()
    .cursor(5000, (rows) => {
      for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
      batch?.();
    });
}
