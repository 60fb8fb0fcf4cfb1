// A journal's history, the rules every kind of store keeps (SPEC §3): what compaction drops is kept, piece by piece
// (a data directory's history/ files, PostgreSQL's history rows by generation), each piece a chain of its own that
// continues the one before it, the journal continuing the newest; retention deletes the oldest at a later
// compaction. Here: how history is verified (`journal check`), and how every record ever kept is read back, once
// each (`session history`, `session get --at`).
import type { ChainHead, JournalRecord } from '../codec/record';
import { restatedCount, SNAPSHOT_EVENT, type RecordSink } from '../codec/verify';
import type { LinePosition } from '../codec/line';
import type { HistoryGeneration, LineReader, LockedLines } from './line-store';

export interface HistoryRetention {
  /** History whose newest record is older than this is deleted by a compaction (CRUX_HISTORY_KEEP, 30d). */
  readonly keepMs: number;
  /** Beyond this many bytes of history, the oldest pieces are deleted (CRUX_HISTORY_MAX_BYTES, 256 MiB). */
  readonly maxBytes: number;
}

export const DEFAULT_HISTORY_RETENTION: HistoryRetention = { keepMs: 30 * 86_400_000, maxBytes: 256 * 1024 * 1024 };

/**
 * A history piece's name, the same on both engines (a data directory's history/ file; `journal copy` carries a
 * database's pieces by it): the journal's stem and the sequence number of the last record it holds.
 */
export const historyName = (file: string, head: { readonly seq: number }): string =>
  `${file.replace(/\.jsonl$/, '')}.${String(head.seq).padStart(12, '0')}.jsonl`;

export interface HistoryReport {
  readonly files: number;
  readonly records: number;
  readonly bytes: number;
  readonly problems: { file: string; line: number; reason: string }[];
  /** With --repair: damaged history pieces moved whole into quarantine. */
  readonly quarantined?: string[];
}

/**
 * Verifies journal `file`'s history: every line of every piece (hash, chain, sequence), and that each piece
 * continues the one before it (its opening snapshot names the previous piece's head), as the journal must
 * continue the newest. With `repair`, a damaged piece moves whole into quarantine. `see`: each record read (check's secrets survey).
 */
export async function checkHistory(
  lines: LockedLines,
  file: string,
  vocabulary: ReadonlySet<string>,
  opts: { repair: boolean; ts: string; see?: ((record: JournalRecord) => void) | undefined },
): Promise<HistoryReport | undefined> {
  const pieces = await lines.history(file);
  if (pieces.length === 0) return undefined;
  const problems: HistoryReport['problems'] = [];
  const damaged: typeof pieces = [];
  let records = 0;
  let bytes = 0;
  let previous: ChainHead | undefined;
  const continues = (where: string, first: JournalRecord | undefined, line: number) => {
    const reason = breakOf(previous, first);
    if (reason !== undefined) problems.push({ file: where, line, reason });
  };
  for (const piece of pieces) {
    let first: JournalRecord | undefined;
    let firstAt: LinePosition | undefined;
    const scan = await piece.scan(
      vocabulary,
      (record, at) => {
        if (first === undefined) [first, firstAt] = [record, at];
      },
      { history: true, see: opts.see },
    );
    const before = problems.length;
    continues(piece.where, first, firstAt?.line ?? 1);
    for (const p of scan.problems) problems.push({ file: piece.where, line: p.line, reason: p.reason });
    if (problems.length > before) damaged.push(piece);
    records += scan.records;
    bytes += scan.bytes;
    previous = scan.head;
  }
  // The journal itself must continue the newest piece.
  continues(lines.journal(file).where, await lines.first(file), 1);
  let quarantined: string[] | undefined;
  if (opts.repair) {
    quarantined = [];
    for (const piece of damaged) quarantined.push(await piece.quarantine(opts.ts));
  }
  return { files: pieces.length, records, bytes, problems, ...(quarantined ? { quarantined } : {}) };
}

/** Why a piece (or the journal) whose first record is `first` does not continue the history before it (head `previous`). */
function breakOf(previous: ChainHead | undefined, first: JournalRecord | undefined): string | undefined {
  if (previous === undefined || first === undefined) return undefined;
  const named = first.ev === SNAPSHOT_EVENT ? (first.data as { previous_head?: ChainHead } | undefined)?.previous_head : undefined;
  return named?.seq === previous.seq && named?.h === previous.h ? undefined : `chain break: does not continue the history before it (head seq ${previous.seq})`;
}

/** A journal's records of one key, verified, in journal order (read through an index); undefined: not at hand. */
export type KeyRecords = () => Promise<readonly { record: JournalRecord; at: LinePosition }[] | undefined>;

/**
 * A history piece's part of a read of one key, through a key index the piece's store keeps (verified, in order):
 * its first record, the key's records and its head (its last record); undefined: not at hand (the piece is read whole).
 */
export type PieceKeyRecords = (piece: HistoryGeneration) => Promise<
  | {
      first: { record: JournalRecord; at: LinePosition };
      /** Its second record, which need not follow the first (restatements left out of the piece). */
      second?: { record: JournalRecord; at: LinePosition } | undefined;
      records: readonly { record: JournalRecord; at: LinePosition }[];
      head: ChainHead;
    }
  | undefined
>;

/**
 * Every record journal `file` ever kept, oldest first: its history pieces, then the journal, each record once
 * (historySink). What `journal check` finds in what it read is told — a bad line passed over, and a chain break,
 * a sequence gap or a piece that does not continue the one before it among the records it kept — each once.
 * With `byKey`, of the journal only its first record and the key's records are read (journalByKey), when they are at hand.
 */
export async function readHistory(
  lines: LineReader,
  file: string,
  vocabulary: ReadonlySet<string>,
  sink: RecordSink,
  byKey?: KeyRecords,
  pieceByKey?: PieceKeyRecords,
): Promise<void> {
  const visit = historySink(sink);
  const journal = lines.journal(file);
  let previous: ChainHead | undefined;
  for (const source of [...(await lines.history(file)), journal]) {
    if (source === journal && byKey !== undefined && (await journalByKey(lines, file, previous, visit, byKey))) return;
    if (source !== journal && pieceByKey !== undefined) {
      const head = await pieceFromKey(source as HistoryGeneration, previous, visit, pieceByKey);
      if (head !== undefined) {
        previous = head;
        continue;
      }
    }
    let first: { record: JournalRecord; line: number } | undefined;
    const scan = await source.scan(
      vocabulary,
      (record, at) => {
        first ??= { record, line: at.line };
        visit(record, at);
      },
      { history: source !== journal },
    );
    // As check: a piece's first record that verifies; the journal's line 1 (a bad line 1 is told as itself).
    const broken = breakOf(previous, source === journal && first?.line !== 1 ? undefined : first?.record);
    if (broken !== undefined) lines.passedOver(file, source.where, { line: first!.line, reason: broken, skipped: false, length: 0 });
    for (const p of scan.problems) lines.passedOver(file, source.where, p);
    previous = scan.head;
  }
}

/**
 * The journal's part of a history read from its first record and the key's records alone, when the journal's
 * line 1 verifies, starts its chain or continues the history before it (`previous`), and the key's records are at
 * hand (`byKey`: verified through an index that trusts the journal it covers, so the records between them follow
 * each other, none a snapshot). false, with nothing passed on: the caller reads the journal whole (and tells what
 * it finds).
 */
async function journalByKey(lines: LineReader, file: string, previous: ChainHead | undefined, visit: HistorySink, byKey: KeyRecords): Promise<boolean> {
  const first = await lines.first(file);
  if (first === undefined || (first.seq !== 1 && first.ev !== SNAPSHOT_EVENT) || breakOf(previous, first) !== undefined) return false;
  if (previous !== undefined && first.seq !== previous.seq + 1) return false;
  const records = await byKey();
  if (records === undefined) return false;
  let seq = first.seq;
  for (const { record, at } of records) {
    if (record.seq === first.seq ? record.h !== first.h || at !== records[0]?.at : record.seq <= seq) return false;
    seq = record.seq;
  }
  // The key's first record may be the journal's first.
  const own = records[0]?.record.seq === first.seq ? records[0] : undefined;
  visit(first, own?.at ?? { offset: 0, length: 0, line: 1 });
  for (const { record, at } of records) {
    if (record === own?.record) continue;
    visit.passOver(record.seq);
    visit(record, at);
  }
  return true;
}

/**
 * A history piece's part of a read of one key (pieceByKey): its first record, the key's records, the records
 * between them passed over (they follow each other, none a snapshot: the piece's key index says so of a piece it
 * read whole and verified), as journalByKey reads the journal. Its head, or undefined with nothing passed on where
 * the piece does not continue `previous` or its records do not follow each other (the caller reads it whole).
 */
async function pieceFromKey(
  piece: HistoryGeneration,
  previous: ChainHead | undefined,
  visit: HistorySink,
  pieceByKey: PieceKeyRecords,
): Promise<ChainHead | undefined> {
  const got = await pieceByKey(piece);
  if (got === undefined) return undefined;
  const { first, second, records, head } = got;
  if (breakOf(previous, first.record) !== undefined) return undefined;
  if (previous === undefined ? first.record.seq !== 1 && first.record.ev !== SNAPSHOT_EVENT : first.record.seq !== previous.seq + 1) return undefined;
  if (second !== undefined && (second.record.seq <= first.record.seq || second.record.seq > head.seq || second.record.ev === SNAPSHOT_EVENT)) return undefined;
  let seq = second?.record.seq ?? first.record.seq;
  for (const { record } of records) {
    if (record.seq === second?.record.seq) continue;
    if (record.seq <= seq || record.seq > head.seq || record.ev === SNAPSHOT_EVENT) return undefined;
    seq = record.seq;
  }
  if (head.seq < first.record.seq) return undefined;
  visit(first.record, first.at);
  // As a whole read meets it: after the opening snapshot, the second record (which tells whether restatements were left out).
  if (second !== undefined) visit(second.record, second.at);
  for (const { record, at } of records) {
    if (record.seq === second?.record.seq) continue;
    visit.passOver(record.seq);
    visit(record, at);
  }
  visit.passOver(head.seq + 1);
  return head;
}

/**
 * Passes a journal's records, history first, oldest first, on to `sink` once each, without the records a
 * compaction wrote to restate versions already passed on (any kind of store reads its history through it).
 * Restatements are passed over only when every version before them was passed on: the history reaches back to
 * the chain's start (or to restatements passed on whole) with nothing missing since, a snapshot's restatements
 * left out of an archive aside. Otherwise (older history deleted, a line lost) they are the oldest versions left.
 */
interface HistorySink extends RecordSink {
  /** Records up to `seq` (not included) not read, each following the one before, none a snapshot: as if passed through. */
  passOver(seq: number): void;
}

function historySink(sink: RecordSink): HistorySink {
  let lastSeq = 0;
  let whole = false;
  // The last snapshot, the last seq of its restatements, whether they repeat versions passed on, whether every
  // one of them has followed the one before (so that, passed on, they make the versions whole again).
  let snapshot = -1;
  let restatedThrough = 0;
  let repeats = false;
  let intact = false;
  const visit = (record: JournalRecord, at: LinePosition) => {
    const seq = record.seq;
    if (seq <= lastSeq) return;
    const next = seq === lastSeq + 1;
    const pastLeftOut = repeats && lastSeq === snapshot && seq === restatedThrough + 1;
    whole = seq === 1 || (whole && (next || pastLeftOut));
    lastSeq = seq;
    if (record.ev === SNAPSHOT_EVENT) {
      [snapshot, restatedThrough, repeats, intact] = [seq, seq + restatedCount(record), whole, true];
      return;
    }
    if (seq <= restatedThrough) {
      if (repeats) return;
      intact &&= next;
      if (intact && seq === restatedThrough) whole = true;
    }
    sink(record, at);
  };
  const passOver = (seq: number) => {
    const [from, to] = [lastSeq + 1, seq - 1];
    if (to < from) return;
    // Each one next: whole stays as it is, except at the chain's start and at the last of restatements made whole.
    if (from === 1) whole = true;
    if (!repeats && intact && from <= restatedThrough && restatedThrough <= to) whole = true;
    lastSeq = to;
  };
  return Object.assign(visit, { passOver });
}
