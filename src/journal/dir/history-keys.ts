// A key index per history piece (issue 47), derived: cache/history/<piece>.keys, so that `session history` of one
// session reads that session's records of each piece, not every piece whole. Made from a piece read whole and
// verified (every line, its chain, no snapshot past line 1; else none is made and the piece is read whole, which
// tells its damage); rebuilt when missing or when it does not verify against its piece. A piece never changes but by
// a rewrite (redact, encrypt), which changes its head: the index names the piece's size and its first and last
// lines (their places and the last one's seq and hash), each read back and verified before the index is used, and
// every record it points to is verified and must be of the key.
//
// The file: a JSON head line, then one line per key, sorted by the key's JSON text: that text, a tab, and the
// key's lines as offset,length,line joined by ";". A read finds its key by a binary search over the file's bytes.
import { fs } from '../../shared/fs';
import { basename, join } from 'node:path';
import { ensurePrivateDir } from '../../shared/durable-fs';
import { openJournalFile } from '../../shared/journal-file';
import { decodeRecord, VERIFY_ALL, type ChainHead, type JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/line';
import { scanJournal } from '../codec/scan';
import { SNAPSHOT_EVENT } from '../codec/verify';
import type { StoreSpec } from '../codec/store-spec';
import { readHistory, type KeyRecords, type PieceKeyRecords } from '../core/history';
import type { LineReader } from '../core/line-store';
import type { RecordSink } from '../codec/verify';
import { CACHE_DIR } from '../derived/cache-file';

const VERSION = 1;
/** Bytes read at once by the search. */
const BLOCK = 512;

interface Head {
  readonly v: number;
  readonly size: number;
  readonly first: LinePosition;
  /** Line 2, which may not follow line 1 (the restatements a compaction left out of the piece: history.ts). */
  readonly second?: LinePosition | undefined;
  readonly last: LinePosition;
  readonly head: ChainHead;
}

type Found = { record: JournalRecord; at: LinePosition };

/** A data directory's PieceKeyRecords for `key` of `spec`'s journal: through each piece's key index, made when missing. */
function pieceKeyReader<S>(root: string, spec: StoreSpec<S>, key: string): PieceKeyRecords | undefined {
  const keyOf = spec.keyOf;
  if (keyOf === undefined) return undefined;
  return async (piece) => {
    const path = piece.id;
    const indexPath = join(root, CACHE_DIR, 'history', `${basename(path)}.keys`);
    let fd: number;
    try {
      fd = openJournalFile(path);
    } catch {
      return undefined;
    }
    try {
      const size = fs.fstatSync(fd).size;
      let found = readIndexed(fd, size, indexPath, spec.vocabulary, keyOf, key);
      if (found === undefined && buildIndex(path, size, indexPath, spec.vocabulary, keyOf))
        found = readIndexed(fd, size, indexPath, spec.vocabulary, keyOf, key);
      return found;
    } finally {
      fs.closeSync(fd);
    }
  };
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  return buf.subarray(0, fs.readSync(fd, buf, 0, length, offset));
}

/** The record at `at` of the piece, verified (its hash, an event of the vocabulary, or the opening snapshot on line 1). */
function recordAt(fd: number, at: LinePosition, vocabulary: ReadonlySet<string>): JournalRecord | undefined {
  const bytes = readAt(fd, at.offset, at.length);
  if (bytes.length !== at.length) return undefined;
  const decoded = decodeRecord(bytes.toString('utf8'), VERIFY_ALL);
  if (!decoded.ok) return undefined;
  return vocabulary.has(decoded.record.ev) || (at.line === 1 && decoded.record.ev === SNAPSHOT_EVENT) ? decoded.record : undefined;
}

/** The key's part of the piece through its index, when the index is there and verifies; else undefined. */
function readIndexed(
  fd: number,
  size: number,
  indexPath: string,
  vocabulary: ReadonlySet<string>,
  keyOf: (record: JournalRecord) => string | undefined,
  key: string,
): { first: Found; second?: Found | undefined; records: Found[]; head: ChainHead } | undefined {
  let ifd: number;
  try {
    ifd = fs.openSync(indexPath, 'r');
  } catch {
    return undefined;
  }
  try {
    const isize = fs.fstatSync(ifd).size;
    const headLine = lineFrom(ifd, isize, 0);
    let head: Head;
    try {
      head = JSON.parse(headLine?.text ?? '');
    } catch {
      return undefined;
    }
    if (head?.v !== VERSION || head.size !== size || headLine === undefined) return undefined;
    const first = recordAt(fd, head.first, vocabulary);
    const last = recordAt(fd, head.last, vocabulary);
    const second = head.second === undefined ? undefined : recordAt(fd, head.second, vocabulary);
    if (first === undefined || last === undefined || last.seq !== head.head.seq || last.h !== head.head.h) return undefined;
    if (head.second !== undefined && second === undefined) return undefined;
    const line = findLine(ifd, headLine.end, isize, JSON.stringify(key));
    const records: Found[] = [];
    for (const part of line === undefined ? [] : line.split(';')) {
      const [offset, length, lineNo] = part.split(',').map(Number);
      const at = { offset: offset!, length: length!, line: lineNo! };
      const record = recordAt(fd, at, vocabulary);
      if (record === undefined || keyOf(record) !== key) return undefined;
      records.push({ record, at });
    }
    return { first: { record: first, at: head.first }, second: second && { record: second, at: head.second! }, records, head: head.head };
  } finally {
    fs.closeSync(ifd);
  }
}

/** The line of the index starting at byte `from`: its text and where the next begins; undefined past the end. */
function lineFrom(fd: number, size: number, from: number): { text: string; end: number } | undefined {
  if (from >= size) return undefined;
  const parts: Buffer[] = [];
  for (let at = from; at < size; ) {
    const block = readAt(fd, at, Math.min(BLOCK, size - at));
    if (block.length === 0) break;
    const nl = block.indexOf(10);
    if (nl !== -1) {
      parts.push(block.subarray(0, nl));
      return { text: Buffer.concat(parts).toString('utf8'), end: at + nl + 1 };
    }
    parts.push(block);
    at += block.length;
  }
  return { text: Buffer.concat(parts).toString('utf8'), end: size };
}

/** The first line starting after byte `at` (strictly), or undefined. */
function nextLine(fd: number, size: number, at: number): { start: number; text: string; end: number } | undefined {
  for (let p = at + 1; p < size; ) {
    const block = readAt(fd, p, Math.min(BLOCK, size - p));
    if (block.length === 0) return undefined;
    const nl = block.indexOf(10);
    if (nl !== -1) {
      const start = p + nl + 1;
      // The line within the block read: no second read.
      const end = block.indexOf(10, nl + 1);
      if (end !== -1) return { start, text: block.toString('utf8', nl + 1, end), end: p + end + 1 };
      const line = lineFrom(fd, size, start);
      return line === undefined ? undefined : { start, ...line };
    }
    p += block.length;
  }
  return undefined;
}

/** The positions part of the line whose key text is `wanted`, by a binary search over the sorted lines in [start, size). */
function findLine(fd: number, start: number, size: number, wanted: string): string | undefined {
  const keyText = (text: string) => text.slice(0, text.indexOf('\t'));
  // The wanted line, if any, starts at a line start in [lo, hi).
  let lo = start;
  let hi = size;
  while (hi - lo > BLOCK) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const next = nextLine(fd, size, mid - 1);
    if (next === undefined || next.start >= hi) {
      hi = mid + 1;
      continue;
    }
    const k = keyText(next.text);
    if (k === wanted) return next.text.slice(k.length + 1);
    if (k < wanted) lo = next.end;
    else hi = next.start;
  }
  // At most a block of line starts left: read it at once (a line past its end, on).
  const block = readAt(fd, lo, hi - lo);
  for (let at = 0; at < block.length; ) {
    const nl = block.indexOf(10, at);
    const text = nl === -1 ? lineFrom(fd, size, lo + at)?.text : block.toString('utf8', at, nl);
    if (text === undefined) return undefined;
    const k = keyText(text);
    if (k === wanted) return text.slice(k.length + 1);
    if (k > wanted || nl === -1) return undefined;
    at = nl + 1;
  }
  return undefined;
}

/** Reads the piece whole and writes its index; false (nothing written) when a line does not verify or a snapshot follows line 1. */
function buildIndex(
  path: string,
  size: number,
  indexPath: string,
  vocabulary: ReadonlySet<string>,
  keyOf: (record: JournalRecord) => string | undefined,
): boolean {
  const byKey = new Map<string, string[]>();
  let first: LinePosition | undefined;
  let second: LinePosition | undefined;
  let last: LinePosition | undefined;
  let lastSeq = 0;
  // A snapshot past line 1, or a record past line 2 that does not follow the one before: no index.
  let later = false;
  const scan = scanJournal(
    path,
    vocabulary,
    (record, at) => {
      if (first === undefined) first = at;
      else if (record.ev === SNAPSHOT_EVENT || (second !== undefined && record.seq !== lastSeq + 1)) later = true;
      else second ??= at;
      last = at;
      lastSeq = record.seq;
      const key = first === at ? undefined : keyOf(record);
      if (key === undefined) return;
      const list = byKey.get(key) ?? [];
      list.push(`${at.offset},${at.length},${at.line}`);
      byKey.set(key, list);
    },
    undefined,
    { history: true },
  );
  if (scan.problems.length > 0 || scan.tornTail !== undefined || scan.bytes !== size || first === undefined || last === undefined || later) return false;
  const head: Head = { v: VERSION, size, first, second, last, head: scan.head };
  const lines = [...byKey].map(([key, at]) => [JSON.stringify(key), at.join(';')] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const text = `${JSON.stringify(head)}\n${lines.map(([k, at]) => `${k}\t${at}\n`).join('')}`;
  try {
    ensurePrivateDir(join(indexPath, '..'));
    const tmp = `${indexPath}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, indexPath);
  } catch {
    // A cache that cannot be written: this read goes on from the piece as it was read.
    return false;
  }
  return true;
}

/** readHistory of a data directory: with `key`, each history piece through its key index (pieceKeyReader). */
export function readDirHistory<S>(
  root: string,
  lines: LineReader,
  spec: StoreSpec<S>,
  sink: RecordSink,
  key: string | undefined,
  byKey: KeyRecords | undefined,
): Promise<void> {
  return readHistory(lines, spec.file, spec.vocabulary, sink, byKey, key === undefined ? undefined : pieceKeyReader(root, spec, key));
}
