// Verifying a journal's records in order, wherever they are stored (a file's lines, a table's rows): each
// record's own hash (through the one codec), its place in the chain and the sequence, the declared vocabulary,
// and batches. Never throws: every finding is a problem at its line.
//
// Batches (SPEC §3, a batch is atomic): the first record of a multi-record append carries `"batch":N`. Its N
// lines are folded together once the N-th has been read; damage inside a complete batch is reported line by
// line and the other records still fold (as anywhere else). A batch that never ends — the journal stops, or
// another write starts, before its N-th line — was a write that never completed: none of its records is
// folded, and at the end of the journal it is a torn tail that the next write quarantines.
//
// History (verified with `history`): a compaction leaves out of the history it archives the records that restate
// history already kept (policy.ts, planCompaction), so there a snapshot may be followed by the record after its
// restatements. That one step is accepted; every record's own hash and the chain from it on are verified as
// anywhere else, and the file still has to continue the one before it.
import { decodeRecord, EMPTY_HEAD, GENESIS, VERIFY_ALL, type ChainHead, type JournalRecord } from './record';
import type { LinePosition, LineProblem } from './line';
import type { Vocabulary } from './store-spec';

export type { LinePosition, LineProblem, RecordSink } from './line';

export const SNAPSHOT_EVENT = 'journal.snapshot';

/** How many records after a compaction's snapshot restate the live state (0 for any other record). */
export function restatedCount(snapshot: JournalRecord | undefined): number {
  const live = snapshot?.ev === SNAPSHOT_EVENT ? snapshot.data?.live_records : undefined;
  return Number.isSafeInteger(live) && live > 0 ? live : 0;
}

/** A batch whose last line never came: where it starts and what of it was read. */
export interface OpenBatch {
  readonly at: LinePosition;
  readonly want: number;
  /** Lines of it read so far (records that verified and lines that did not). */
  readonly seen: number;
}

export interface Verified {
  readonly records: number;
  readonly problems: LineProblem[];
  /** The last record folded (for chaining the next append: before a batch still open), and where its line is. */
  readonly head: ChainHead;
  readonly headAt?: LinePosition;
  /** A batch still open when the journal ended (the caller reports it as a torn tail). */
  readonly open?: OpenBatch;
}

/** Held in an open batch for a line that does not fold (a bad payload). */
const NOT_FOLDED = Symbol('not folded');

/**
 * The lines of an open batch, flat (a batch may hold a million lines): what `keep` kept of each, and where
 * each is (line, offset, length).
 */
interface Held<T> {
  readonly items: (T | typeof NOT_FOLDED)[];
  readonly ats: number[];
  /** The chain head after the last line held. */
  last: ChainHead;
}

/**
 * Verifies records in order and hands each one that folds to `sink`. A batch's records are held until its last
 * line has been read; `keep` says what is held of each (by default the record itself): a streaming reader that
 * needs only a little of every record keeps a long batch (an import of a million sessions) in bounded memory.
 * `keep` runs as each record is read, before its batch is known to be whole; `sink` only once it is.
 */
export class ChainVerifier<T = JournalRecord> {
  private readonly problems: LineProblem[] = [];
  private records = 0;
  private head: ChainHead;
  private headAt: LinePosition | undefined;
  // The chain as last seen: undefined after an unreadable line, so that one bad line is reported once.
  private chain: ChainHead | undefined;
  private first: boolean;
  private batch:
    | {
        at: LinePosition;
        want: number;
        seen: number;
        seq: number;
        held: Held<T>;
        last: LinePosition;
        before: ChainHead;
        beforeAt: LinePosition | undefined;
      }
    | undefined;

  // In history: the snapshot just visited and how many restatements followed it in the journal.
  private restated: { seq: number; count: number } | undefined;

  /**
   * `from`: the head before the first line visited, when the lines before it are known (a snapshot's tail).
   * `history`: the lines are a history file's (or rows), where a snapshot's restatements may be left out.
   */
  constructor(
    private readonly vocabulary: Vocabulary,
    private readonly sink: (item: T, at: LinePosition) => void,
    from?: ChainHead,
    private readonly history = false,
    private readonly keep: (record: JournalRecord, at: LinePosition) => T = (record) => record as unknown as T,
  ) {
    this.head = from ?? EMPTY_HEAD;
    this.chain = this.head;
    this.first = from === undefined;
  }

  /** One line, in order. `badUtf8` tells a hash mismatch caused by bytes that are not UTF-8 apart. */
  visit(text: string, at: LinePosition, badUtf8?: () => boolean): void {
    const decoded = decodeRecord(text, VERIFY_ALL);
    if (!decoded.ok) {
      const reason = decoded.reason === 'hash mismatch' && badUtf8?.() ? 'invalid UTF-8' : decoded.reason;
      this.problems.push({ ...at, reason, skipped: true });
      this.chain = decoded.h !== undefined && decoded.seq !== undefined ? { seq: decoded.seq, h: decoded.h } : undefined;
      this.first = false;
      this.countInBatch(at);
      return;
    }
    const record = decoded.record;
    // A record that does not continue the open batch (a new batch, another sequence number, another chain) means
    // the batch's write stopped there.
    const batch = this.batch;
    if (
      batch !== undefined &&
      (record.batch !== undefined || record.seq !== batch.seq + batch.seen || (this.chain !== undefined && record.p !== this.chain.h))
    ) {
      this.breakBatch(`broken at line ${at.line}`);
    }
    const findings: string[] = [];
    if (this.first) {
      const startsChain = record.seq === 1 && record.p === GENESIS;
      const continuesChain = record.ev === SNAPSHOT_EVENT && record.data?.previous_head?.h === record.p && record.data?.previous_head?.seq === record.seq - 1;
      if (!startsChain && !continuesChain) findings.push('chain break (the journal does not start at the beginning of its chain)');
    } else if (this.chain !== undefined && !this.leftOut(record)) {
      if (record.p !== this.chain.h) findings.push('chain break');
      if (record.seq !== this.chain.seq + 1) findings.push(`sequence gap (expected ${this.chain.seq + 1}, found ${record.seq})`);
    }
    this.restated = this.history && restatedCount(record) > 0 ? { seq: record.seq, count: restatedCount(record) } : undefined;
    this.first = false;
    this.chain = { seq: record.seq, h: record.h };
    if (findings.length > 0) this.problems.push({ ...at, reason: findings.join('; '), skipped: false });
    if (record.batch !== undefined) {
      this.batch = {
        at,
        want: record.batch,
        seen: 0,
        seq: record.seq,
        held: { items: [], ats: [], last: this.head },
        last: at,
        before: this.head,
        beforeAt: this.headAt,
      };
    }
    const refused =
      record.ev === SNAPSHOT_EVENT
        ? undefined
        : !this.vocabulary.has(record.ev)
          ? `unknown event ${JSON.stringify(record.ev)}`
          : this.vocabulary.payloadProblem?.(record);
    if (refused !== undefined) {
      this.problems.push({ ...at, reason: this.vocabulary.has(record.ev) ? `bad payload for ${record.ev}: ${refused}` : refused, skipped: true });
      this.countInBatch(at, { seq: record.seq, h: record.h }, NOT_FOLDED);
      return;
    }
    const item = this.keep(record, at);
    if (this.batch === undefined) this.fold({ seq: record.seq, h: record.h }, item, at);
    else this.countInBatch(at, { seq: record.seq, h: record.h }, item);
  }

  /** Whether `record` follows, in history, the snapshot just before it with that snapshot's restatements left out. */
  private leftOut(record: JournalRecord): boolean {
    const r = this.restated;
    return r !== undefined && this.chain?.seq === r.seq && record.seq === r.seq + r.count + 1;
  }

  /** The outcome. A batch still open is left unfolded, in `open`, for the caller to report. */
  finish(): Verified {
    const open = this.batch;
    this.batch = undefined;
    const head = open ? open.before : this.head;
    const headAt = open ? open.beforeAt : this.headAt;
    return {
      records: this.records,
      problems: this.problems,
      head,
      ...(headAt ? { headAt } : {}),
      ...(open ? { open: { at: open.at, want: open.want, seen: open.seen } } : {}),
    };
  }

  private fold(head: ChainHead, item: T, at: LinePosition): void {
    this.head = head;
    this.headAt = at;
    this.records += 1;
    this.sink(item, at);
  }

  /** A line of the open batch, if there is one (`head` undefined: the line did not decode). */
  private countInBatch(at: LinePosition, head?: ChainHead, item: T | typeof NOT_FOLDED = NOT_FOLDED): void {
    const batch = this.batch;
    if (batch === undefined) {
      // An unknown event outside a batch still moves the chain head (the next append continues after it).
      if (head !== undefined) {
        this.head = head;
        this.headAt = at;
      }
      return;
    }
    batch.seen += 1;
    batch.last = at;
    if (head !== undefined) {
      batch.held.items.push(item);
      batch.held.ats.push(at.line, at.offset, at.length);
      batch.held.last = head;
    }
    if (batch.seen < batch.want) return;
    this.batch = undefined;
    const { items, ats } = batch.held;
    for (let i = 0; i < items.length; i++) {
      const held = items[i]!;
      const where = { line: ats[3 * i]!, offset: ats[3 * i + 1]!, length: ats[3 * i + 2]! };
      this.headAt = where;
      if (held === NOT_FOLDED) continue;
      this.records += 1;
      this.sink(held, where);
    }
    if (items.length > 0) this.head = batch.held.last;
  }

  /** A batch that another write interrupted: none of its records is folded; its lines are one problem. */
  private breakBatch(why: string): void {
    const batch = this.batch!;
    this.batch = undefined;
    const length = batch.last.offset + batch.last.length - batch.at.offset;
    this.problems.push({
      ...batch.at,
      length,
      reason: `incomplete batch (${batch.seen} of ${batch.want} records, ${why}): a write that never completed`,
      skipped: true,
    });
  }
}
