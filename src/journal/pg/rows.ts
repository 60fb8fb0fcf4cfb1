// Verifying a journal's rows as replay verifies a file's lines: each row's own hash, its place in the chain and
// the sequence, the declared vocabulary, and batches (a batch that does not end is not folded). Never throws.
import { decodeRecord, EMPTY_HEAD, VERIFY_ALL, GENESIS, type ChainHead, type JournalRecord } from '../record';
import { SNAPSHOT_EVENT, type LinePosition } from '../scan';

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
}

export interface RowScan {
  readonly records: number;
  readonly lines: number;
  readonly bytes: number;
  readonly problems: RowProblem[];
  readonly head: ChainHead;
  readonly headAt?: LinePosition;
}

export type RowSink = (record: JournalRecord, at: LinePosition) => void;

/** Where a row is, in the terms the journal layer uses for a line (the offset is the line: rows have no bytes offsets). */
export const rowPosition = (line: number, body: string): LinePosition => ({ line, offset: line, length: Buffer.byteLength(body) });

/** Verifies rows in line order, handing each record that verifies to `sink`. */
export class RowVerifier {
  private readonly problems: RowProblem[] = [];
  private records = 0;
  private lines = 0;
  private bytes = 0;
  private head: ChainHead = EMPTY_HEAD;
  private headAt: LinePosition | undefined;
  private chain: ChainHead | undefined = EMPTY_HEAD;
  private first = true;
  /** The records of a batch still open, folded only once its last record has been seen. */
  private batch: { want: number; held: { record: JournalRecord; at: LinePosition }[] } | undefined;

  constructor(
    private readonly vocabulary: ReadonlySet<string>,
    private readonly sink: RowSink,
  ) {}

  visit(row: Row): void {
    this.lines += 1;
    const at = rowPosition(row.line, row.body);
    this.bytes += at.length + 1;
    const decoded = decodeRecord(row.body, VERIFY_ALL);
    if (!decoded.ok) {
      this.problems.push({ line: row.line, reason: decoded.reason, skipped: true });
      this.chain = decoded.h !== undefined && decoded.seq !== undefined ? { seq: decoded.seq, h: decoded.h } : undefined;
      this.first = false;
      this.breakBatch(row.line);
      return;
    }
    const record = decoded.record;
    const findings: string[] = [];
    if (this.first) {
      const startsChain = record.seq === 1 && record.p === GENESIS;
      const continuesChain = record.ev === SNAPSHOT_EVENT && record.data?.previous_head?.h === record.p &&
        record.data?.previous_head?.seq === record.seq - 1;
      if (!startsChain && !continuesChain) findings.push('chain break (the journal does not start at the beginning of its chain)');
    } else if (this.chain !== undefined) {
      if (record.p !== this.chain.h) findings.push('chain break');
      if (record.seq !== this.chain.seq + 1) findings.push(`sequence gap (expected ${this.chain.seq + 1}, found ${record.seq})`);
    }
    this.first = false;
    this.chain = { seq: record.seq, h: record.h };
    this.head = this.chain;
    this.headAt = at;
    if (findings.length > 0) this.problems.push({ line: row.line, reason: findings.join('; '), skipped: false });
    if (record.ev !== SNAPSHOT_EVENT && !this.vocabulary.has(record.ev)) {
      this.problems.push({ line: row.line, reason: `unknown event ${JSON.stringify(record.ev)}`, skipped: true });
      return;
    }
    const mark = (record as { batch?: unknown }).batch;
    if (this.batch !== undefined && mark !== undefined) this.breakBatch(row.line);
    if (typeof mark === 'number' && Number.isSafeInteger(mark) && mark > 1) this.batch = { want: mark, held: [] };
    this.records += 1;
    if (this.batch === undefined) {
      this.sink(record, at);
      return;
    }
    this.batch.held.push({ record, at });
    if (this.batch.held.length === this.batch.want) {
      for (const held of this.batch.held) this.sink(held.record, held.at);
      this.batch = undefined;
    }
  }

  /** The scan's outcome; a batch still open at the end is reported and left unfolded. */
  finish(): RowScan {
    if (this.batch !== undefined) {
      const first = this.batch.held[0]!;
      this.problems.push({ line: first.at.line, reason: `incomplete batch (${this.batch.held.length} of ${this.batch.want} records)`, skipped: true });
      this.records -= this.batch.held.length;
      this.batch = undefined;
    }
    return {
      records: this.records,
      lines: this.lines,
      bytes: this.bytes,
      problems: this.problems,
      head: this.head,
      ...(this.headAt ? { headAt: this.headAt } : {}),
    };
  }

  private breakBatch(line: number): void {
    if (this.batch === undefined) return;
    const first = this.batch.held[0]!;
    this.problems.push({ line: first.at.line, reason: `incomplete batch (${this.batch.held.length} of ${this.batch.want} records, broken at line ${line})`, skipped: true });
    this.records -= this.batch.held.length;
    this.batch = undefined;
  }
}
