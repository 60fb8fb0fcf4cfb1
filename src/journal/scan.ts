// Streaming replay of one journal file: verifies every line and its place in the chain; never throws on bad data.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { isUtf8 } from 'node:buffer';
import { decodeLine, EMPTY_HEAD, GENESIS, type ChainHead, type JournalRecord } from './record';

export const SNAPSHOT_EVENT = 'journal.snapshot';
const CHUNK = 1 << 20;

/** Where a line sits in its file: 1-based line number, byte offset, byte length without the \n. */
export interface LinePosition {
  readonly line: number;
  readonly offset: number;
  readonly length: number;
}

export interface LineProblem extends LinePosition {
  readonly reason: string;
  /** True when the line's own bytes are unusable (it is not applied); false for chain/sequence findings. */
  readonly skipped: boolean;
}

export interface ScanResult {
  readonly exists: boolean;
  readonly bytes: number;
  readonly lines: number;
  readonly records: number;
  readonly problems: LineProblem[];
  /** The unterminated fragment at the end of the file, if any. */
  readonly tornTail?: { readonly offset: number; readonly length: number };
  /** The last record that verified, for chaining the next append, and where its line is. */
  readonly head: ChainHead;
  readonly headAt?: LinePosition;
  readonly ms: number;
}

export type RecordSink = (record: JournalRecord, at: LinePosition) => void;

/** Where a scan starts when the lines before it are already known (a snapshot's tail). */
export interface ScanStart {
  readonly offset: number;
  readonly line: number;
  readonly head: ChainHead;
}

/**
 * Reads `path` line by line. Each record that verifies (own hash, known event) goes to `sink`; every
 * other line becomes a problem with its line number. A missing file is an empty journal.
 */
export function scanJournal(path: string | number, vocabulary: ReadonlySet<string>, sink: RecordSink, from?: ScanStart): ScanResult {
  const started = process.hrtime.bigint();
  let fd: number;
  try {
    fd = typeof path === 'number' ? path : fs.openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { exists: false, bytes: 0, lines: 0, records: 0, problems: [], head: EMPTY_HEAD, ms: 0 };
    }
    throw error;
  }
  const problems: LineProblem[] = [];
  let records = 0;
  let lineNo = from?.line ?? 0;
  let head: ChainHead = from?.head ?? EMPTY_HEAD;
  let headAt: LinePosition | undefined;
  // The chain as last seen: undefined after an unreadable line, so that one bad line is reported once.
  let chain: ChainHead | undefined = head;
  let first = from === undefined;

  const visit = (buf: Buffer, start: number, end: number, offset: number) => {
    lineNo += 1;
    const at: LinePosition = { line: lineNo, offset, length: end - start };
    const text = buf.toString('utf8', start, end);
    const decoded = decodeLine(text);
    if (!decoded.ok) {
      const reason = decoded.reason === 'hash mismatch' && !isUtf8(buf.subarray(start, end)) ? 'invalid UTF-8' : decoded.reason;
      problems.push({ ...at, reason, skipped: true });
      chain = decoded.h !== undefined && decoded.seq !== undefined ? { seq: decoded.seq, h: decoded.h } : undefined;
      first = false;
      return;
    }
    const record = decoded.record;
    const findings: string[] = [];
    if (first) {
      const startsChain = record.seq === 1 && record.p === GENESIS;
      const continuesChain = record.ev === SNAPSHOT_EVENT && record.data?.previous_head?.h === record.p &&
        record.data?.previous_head?.seq === record.seq - 1;
      if (!startsChain && !continuesChain) findings.push('chain break (the journal does not start at the beginning of its chain)');
    } else if (chain !== undefined) {
      if (record.p !== chain.h) findings.push('chain break');
      if (record.seq !== chain.seq + 1) findings.push(`sequence gap (expected ${chain.seq + 1}, found ${record.seq})`);
    }
    first = false;
    chain = { seq: record.seq, h: record.h };
    head = chain;
    headAt = at;
    if (findings.length > 0) problems.push({ ...at, reason: findings.join('; '), skipped: false });
    if (record.ev !== SNAPSHOT_EVENT && !vocabulary.has(record.ev)) {
      problems.push({ ...at, reason: `unknown event ${JSON.stringify(record.ev)}`, skipped: true });
      return;
    }
    records += 1;
    sink(record, at);
  };

  let carry: Buffer | undefined;
  let carryOffset = 0;
  let position = from?.offset ?? 0;
  const chunk = Buffer.allocUnsafe(CHUNK);
  try {
    for (;;) {
      const n = fs.readSync(fd, chunk, 0, CHUNK, position);
      if (n === 0) break;
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
  let tornTail: ScanResult['tornTail'];
  if (carry !== undefined) {
    tornTail = { offset: carryOffset, length: carry.length };
    problems.push({ line: lineNo + 1, offset: carryOffset, length: carry.length, reason: `torn tail (${carry.length} bytes without a final newline)`, skipped: true });
  }
  return {
    exists: true,
    bytes: position,
    lines: lineNo + (carry ? 1 : 0),
    records,
    problems,
    ...(tornTail ? { tornTail } : {}),
    head,
    ...(headAt ? { headAt } : {}),
    ms: Number(process.hrtime.bigint() - started) / 1e6,
  };
}
