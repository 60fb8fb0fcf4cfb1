// Streaming replay of one journal file: verifies every line and its place in the chain; never throws on bad data.
import { fs } from '../../shared/fs';
import { isUtf8 } from 'node:buffer';
import { EMPTY_HEAD, type ChainHead, type JournalRecord } from './record';
import { asStorageError } from '../../shared/durable-fs';
import { ChainVerifier, type LineProblem, type LinePosition, type RecordSink } from './verify';
import type { ProgressSink } from './reporting';
import { openJournalFile } from '../../shared/journal-file';
import { expectHashUnits } from '../../shared/sha256';

export { SNAPSHOT_EVENT, type LinePosition, type LineProblem, type RecordSink } from './verify';
const CHUNK = 1 << 20;

export interface ScanResult {
  readonly exists: boolean;
  readonly bytes: number;
  readonly lines: number;
  readonly records: number;
  readonly problems: LineProblem[];
  /**
   * What a write that never completed left at the end of the file, if anything: an unterminated fragment,
   * or a batch whose last record is missing (with any fragment after it). None of it is folded.
   */
  readonly tornTail?: TornTail;
  /** The last record that verified, for chaining the next append, and where its line is. */
  readonly head: ChainHead;
  readonly headAt?: LinePosition;
  readonly ms: number;
}

/** Whether a scan found damage: any problem but a torn tail (which the next write quarantines). */
export const isDamaged = (scan: Pick<ScanResult, 'problems' | 'tornTail'>): boolean => scan.problems.some((p) => p.offset !== scan.tornTail?.offset);

/** Bytes at the end of a journal that a write left unfinished: from `line` at `offset`, to the end. */
export interface TornTail {
  readonly offset: number;
  readonly length: number;
  readonly line: number;
  /** Set when the tail is a batch without its last record: how many of its records are there. */
  readonly batch?: { readonly seen: number; readonly want: number };
}

/**
 * One consumer of a scan's records, through scanJournal's `keep` and sink: what it makes of each record as it is
 * read (before its batch is known whole), handed back to `take` once the batch is whole.
 */
export interface ScanPart<K> {
  keep(record: JournalRecord, at: LinePosition): K;
  take(kept: K, at: LinePosition): void;
  /** false when `take` does nothing (then what `keep` made need not be held for it). */
  readonly takes?: boolean;
  /** Whether `take` does nothing with this item: a part that takes only a few of its items need not have the rest held. */
  idle?(kept: K): boolean;
}

/** Where a scan starts when the lines before it are already known (a snapshot's tail). */
export interface ScanStart {
  readonly offset: number;
  readonly line: number;
  readonly head: ChainHead;
}

/**
 * Reads `path` line by line. Each record that verifies (own hash, known event) goes to `sink`; every
 * other line becomes a problem with its line number. A missing file is an empty journal. `history`: the
 * file is a history file (a snapshot's restatements may be left out, verify.ts). With `keep`, `sink` is
 * handed what `keep` made of each record as it was read (ChainVerifier: a long batch held in little memory).
 */
export function scanJournal(
  path: string | number,
  vocabulary: ReadonlySet<string>,
  sink: RecordSink,
  from?: ScanStart,
  opts?: { history?: boolean },
): ScanResult;
export function scanJournal<T>(
  path: string | number,
  vocabulary: ReadonlySet<string>,
  sink: (item: T, at: LinePosition) => void,
  from: ScanStart | undefined,
  opts: { history?: boolean; keep: (record: JournalRecord, at: LinePosition) => T },
): ScanResult;
export function scanJournal<T>(
  path: string | number,
  vocabulary: ReadonlySet<string>,
  sink: (item: T, at: LinePosition) => void,
  from?: ScanStart,
  opts: { history?: boolean; keep?: (record: JournalRecord, at: LinePosition) => T } = {},
): ScanResult {
  const started = process.hrtime.bigint();
  let fd: number;
  try {
    fd = typeof path === 'number' ? path : openJournalFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { exists: false, bytes: 0, lines: 0, records: 0, problems: [], head: EMPTY_HEAD, ms: 0 };
    }
    throw asStorageError(error, String(path));
  }
  let lineNo = from?.line ?? 0;
  const verifier = new ChainVerifier<T>(vocabulary, sink, from?.head, opts.history, opts.keep);
  const visit = (buf: Buffer, start: number, end: number, offset: number) => {
    lineNo += 1;
    verifier.visit(buf.toString('utf8', start, end), { line: lineNo, offset, length: end - start }, () => !isUtf8(buf.subarray(start, end)));
  };

  let carry: Buffer | undefined;
  let carryOffset = 0;
  let position = from?.offset ?? 0;
  const chunk = Buffer.allocUnsafe(CHUNK);
  try {
    for (;;) {
      let n: number;
      try {
        n = fs.readSync(fd, chunk, 0, CHUNK, position);
      } catch (error) {
        throw asStorageError(error, String(path));
      }
      if (n === 0) break;
      // Its lines are hashed one by one: a long read loads the native hash first (shared/sha256.ts).
      if (position === (from?.offset ?? 0)) expectHashUnits(n);
      let buf = chunk.subarray(0, n);
      let base = position;
      if (carry !== undefined) {
        buf = Buffer.concat([carry, buf]);
        base = carryOffset;
        carry = undefined;
      }
      position += n;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
        visit(buf, start, nl, base + start);
        start = nl + 1;
      }
      if (start < buf.length) {
        carry = Buffer.from(buf.subarray(start));
        carryOffset = base + start;
      }
    }
  } finally {
    if (typeof path !== 'number') fs.closeSync(fd);
  }
  const verified = verifier.finish();
  const problems: LineProblem[] = verified.problems;
  let tornTail: ScanResult['tornTail'];
  if (verified.open !== undefined) {
    // A batch without its last record: the write stopped there. Its lines, and any fragment after them, are the torn tail.
    const { at, seen, want } = verified.open;
    tornTail = { offset: at.offset, length: position - at.offset, line: at.line, batch: { seen, want } };
    const fragment = carry === undefined ? '' : `, then ${carry.length} bytes without a final newline`;
    problems.push({ ...at, length: tornTail.length, reason: `torn tail (an incomplete batch: ${seen} of ${want} records${fragment})`, skipped: true });
  } else if (carry !== undefined) {
    tornTail = { offset: carryOffset, length: carry.length, line: lineNo + 1 };
    problems.push({
      line: lineNo + 1,
      offset: carryOffset,
      length: carry.length,
      reason: `torn tail (${carry.length} bytes without a final newline)`,
      skipped: true,
    });
  }
  return {
    exists: true,
    bytes: position,
    lines: lineNo + (carry ? 1 : 0),
    records: verified.records,
    problems,
    ...(tornTail ? { tornTail } : {}),
    head: verified.head,
    ...(verified.headAt ? { headAt: verified.headAt } : {}),
    ms: Number(process.hrtime.bigint() - started) / 1e6,
  };
}

/** A record sink that tells `sink` how far a scan of `path` has come (for a progress line). */
export function withTotal(sink: ProgressSink, file: string, path: string): (at: LinePosition) => void {
  let total = 0;
  try {
    total = fs.statSync(path).size;
  } catch {
    // A missing journal has no records, so the sink is never called.
  }
  return (at) => sink(file, at.offset + at.length + 1, total);
}
