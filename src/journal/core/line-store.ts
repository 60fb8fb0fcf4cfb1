// The seam under the whole-journal operations: what a kind of store (a data directory's files, PostgreSQL's rows)
// gives check and repair, compaction and its history, and history reads (check.ts, compact.ts, history.ts here),
// so that each of them is written once. A store reads a journal's lines, or a history piece's, through the one
// verifier (codec/verify.ts) and replaces a journal whole, keeping the old one as a history piece, under its lock;
// the rules (what to re-chain, what to archive, what a damaged piece becomes) are the core's.
//
// A rewrite through `replace` is all or nothing: after a crash at any moment (kill -9) the store holds the old
// journal and its history as they were, or the new journal and the old one as history (a data directory: a
// history file made before the rename, passed over by readers until the rename is done; PostgreSQL: one
// transaction). Compaction and repair go through it.
//
// A rewrite of many pieces at once (`stage`: journals, history pieces, quarantined items; what `journal redact`,
// `encrypt`, `rekey` do through core/rewrite.ts) is all or nothing too: each new piece is staged aside, then
// `commit` puts every one in place together, the derived data of each journal staged dropped with it (a data
// directory: a plan file whose rename is the commit point, rolled forward by the next holder of the lock after a
// crash; PostgreSQL: the one transaction).
import type { ChainHead, JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/line';
import type { ProgressSink } from '../codec/reporting';
import type { StoreSpec } from '../codec/store-spec';

/** A line that did not verify: where (its line number, its bytes in the journal as a file: a torn batch's run to the end). */
export interface LinesProblem {
  readonly line: number;
  readonly reason: string;
  /** True when the line is not applied (its bytes are unusable, or a batch never finished). */
  readonly skipped: boolean;
  readonly length: number;
}

/** One verified pass over a journal's lines (a file's, or a table's rows). */
export interface LinesScan {
  readonly exists: boolean;
  readonly records: number;
  readonly lines: number;
  readonly bytes: number;
  readonly problems: readonly LinesProblem[];
  /** What a write that never completed left at the end (a data directory only: a database commits whole). */
  readonly tornTail?: { readonly offset: number; readonly length: number } | undefined;
  readonly head: ChainHead;
}

export type LineSink = (record: JournalRecord, at: LinePosition) => void;

/** How a scan reads (LinesSource.scan). */
export interface ScanOptions<T> {
  readonly history?: boolean;
  readonly progress?: ProgressSink | undefined;
  readonly see?: LineSink | undefined;
  readonly keep?: ((record: JournalRecord, at: LinePosition) => T) | undefined;
}

/** A journal, or one piece of its history, as lines to verify. */
export interface LinesSource {
  /** How problems in it are named (`history/sessions.000000000012.jsonl`, `journal_sessions`). */
  readonly where: string;
  /**
   * Verifies every line in order; each record that verifies goes to `sink` once its batch is whole. Without a
   * sink, the records are not held at all (a check: a 1M-record batch must not be held to be verified).
   * `history`: the lines are a history piece (a snapshot's restatements may be left out, verify.ts). `see`: each
   * record that verifies, and where, as it is read (a batch's before it is whole), holding nothing (check's secrets
   * survey, and its replay when it does not repair). `keep`: what is held of each record until its batch is whole,
   * and what `sink` is then handed in its place (a fold that needs little of each record verifies a 1M-record batch
   * in little memory: doctor's); default the record.
   */
  scan<T = JournalRecord>(vocabulary: ReadonlySet<string>, sink: ((item: T, at: LinePosition) => void) | undefined, opts?: ScanOptions<T>): Promise<LinesScan>;
}

/** One piece of a journal's history: what one compaction dropped. */
export interface HistoryGeneration extends LinesSource {
  /** How the store finds the piece again (a file's path, a generation number): for StagedRewrite.history. */
  readonly id: string;
  /** Moves the piece whole into quarantine (a damaged piece, on repair); returns how the quarantine names it. */
  quarantine(ts: string): Promise<string>;
}

/** What history reads need of a store, with or without its lock. */
export interface LineReader {
  journal(file: string): LinesSource;
  /** The journal's history pieces, oldest first (what a crashed compaction left is not history). */
  history(file: string): Promise<HistoryGeneration[]>;
  /** Tells the operator of a record a history read passed over. */
  passedOver(file: string, where: string, problem: LinesProblem): void;
  /** The journal's first record, if its first line verifies (a compacted journal's opening snapshot). */
  first(file: string): Promise<JournalRecord | undefined>;
}

/** A journal folded whole under the lock, and where it ends. */
export interface Folded<S> {
  readonly state: S;
  readonly records: number;
  readonly bytes: number;
  readonly lines: number;
  readonly head: ChainHead;
  readonly tornTail?: { readonly offset: number; readonly length: number } | undefined;
  /** Lines that failed verification (a torn tail aside). */
  readonly damaged: boolean;
}

/**
 * The old journal as a history piece, kept by `replace` before the new journal takes its place: named by `head`,
 * without the records `leaveOut` (sequence numbers) names, and only its first `end` bytes (a torn tail aside).
 */
export interface ArchivePlan {
  readonly head: ChainHead;
  /** When the rewrite ran (a database dates each piece by it; retention reads a file's newest record). */
  readonly ts: string;
  readonly firstSeq: number;
  readonly leaveOut: { readonly from: number; readonly to: number } | undefined;
  readonly end: number;
  /** Whether the piece is the journal as it is (nothing left out): a data directory links it. */
  readonly whole: boolean;
}

/** One item quarantine holds (of any journal). */
export interface QuarantineItem {
  /** How the quarantine names it (`quarantine/sessions.jsonl.<time>.<pid>.tail-at-120`). */
  readonly name: string;
  read(): Promise<Buffer>;
}

/**
 * New pieces staged aside, none of them visible, until `commit` puts all of them in place at once (all or nothing
 * under kill -9), drops the derived data of every journal staged in the same step (no old text remains in it),
 * and rebuilds nothing: the caller calls `rewritten` for each journal after. `abort` drops what was staged.
 */
export interface StagedRewrite {
  journal(spec: StoreSpec<unknown>, text: string): Promise<void>;
  history(file: string, piece: HistoryGeneration, text: string): Promise<void>;
  quarantine(item: QuarantineItem, bytes: Uint8Array): Promise<void>;
  /** `note`: what the commit log says. */
  commit(note: string): Promise<void>;
  abort(): Promise<void>;
}

/** What the whole-journal operations do to a store under its lock. */
export interface LockedLines extends LineReader {
  /** A whole, verifying, quiet fold of the journal. */
  fold<S>(spec: StoreSpec<S>, progress?: ProgressSink): Promise<Folded<S>>;
  /** The sequence number of the newest record its history holds (undefined: none). */
  historyHead(file: string): Promise<number | undefined>;
  /** The journal's bytes as a file (every line and its `\n`; `journal copy` writes the same), or those of `range`. */
  bytes(file: string, range?: { offset: number; length: number }): Promise<Buffer>;
  /** Keeps `bytes` in quarantine as `label` of journal `file`; returns how the quarantine names it. */
  quarantine(file: string, label: string, bytes: Uint8Array | string, ts: string): Promise<string>;
  /** How many items quarantine holds for journal `file`. */
  quarantined(file: string): Promise<number>;
  /** Every item quarantine holds, of every journal. */
  quarantineItems(): Promise<QuarantineItem[]>;
  /** Begins a rewrite of many pieces at once (StagedRewrite). */
  stage(): Promise<StagedRewrite>;
  /**
   * Replaces the journal with the lines of `text` all at once, keeping its owner and mode, and, with `archive`, the
   * old journal as a history piece: all or nothing, whatever stops it. `note`: what the commit log says.
   */
  replace(spec: StoreSpec<unknown>, text: string, opts: { archive?: ArchivePlan; note: string }): Promise<number>;
  /** Brings the derived data of a journal just replaced up to date (`state`: its fold, when known). */
  rewritten<S>(spec: StoreSpec<S>, state?: S): Promise<void>;
  /** Records the store's key id (null: none) in the rewrite's own commit, where the store keeps it among its rows (PostgreSQL). */
  recordStoreKey?(keyId: string | null): Promise<void>;
  /** Deletes history past its retention; all of it with `drop`. */
  pruneHistory(ts: string, drop: boolean): Promise<void>;
  /** The refusal to rewrite a damaged journal (`doing`: `compaction`, say, which would drop its damaged lines). */
  damaged(file: string, doing: string): Error;
  /** Before a rewrite: what an earlier one that crashed left aside goes to quarantine. */
  sweep?(file: string, ts: string): Promise<void>;
  /**
   * A store with derived rows checked against a replay: how they disagree with `replay` (the journal folded whole,
   * `keys` its entities), rebuilt with `repair`; undefined when they agree.
   */
  checkDerived?<S>(spec: StoreSpec<S>, replay: { state: S; keys: ReadonlySet<string> }, repair: boolean): Promise<DerivedReport | undefined>;
  /** Whether a journal an earlier write found due for compaction is still due, now under the lock (another host may have compacted it). */
  stillDue?(spec: StoreSpec<unknown>): Promise<boolean>;
  /** After an automatic compaction found nothing dead: how the store remembers not to try again too soon. */
  nothingDead?(spec: StoreSpec<unknown>, folded: Folded<unknown>): Promise<void>;
}

/** How a journal's derived rows disagree with a replay (JournalReport.derived), and whether repair rebuilt them. */
export interface DerivedReport {
  readonly problems: string[];
  readonly rebuilt?: boolean;
}

/** A kind of store as the whole-journal operations see it. */
export interface LineStore {
  /**
   * Runs `fn` under the writers' lock (a store that does not exist yet: as it is, nothing to lock). `readOnly`:
   * `fn` only reads, and may run without the lock where a store cannot take it for want of write access.
   */
  locked<T>(fn: (lines: LockedLines) => Promise<T>, opts?: { readOnly?: boolean }): Promise<T>;
}
