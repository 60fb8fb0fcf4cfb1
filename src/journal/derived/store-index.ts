// The index of one store's journal: which lines concern each entity (the key lines), and which entities
// have each value of the store's named secondary keys — a base of sorted runs of checksummed pages named by a
// manifest (index-base.ts, index-levels.ts), and a log of checksummed blocks that writers append after it, in the
// same file (block-log.ts).
//
// Trusted only as far as it verifies: the base's header and every page read, each log block, and the
// binding of the last verified block (or of the base) to the journal — the record at the head it names must
// still carry its hash. Records past what the index covers (a write whose log block was lost to a full disk
// or a crash, an index copied from an older state of the same journal) are read from the journal and
// verified, so the index is a prefix that the journal's own tail completes. Every line read through the index
// is decoded and verified like a replay's, and must concern the key asked for.
//
// This file opens an index and keeps it up to date after a writer's appends; reading by key is index-lookup.ts,
// reading by value index-queries.ts (one class chain: they share the open index's state).
import { fs } from '../../shared/fs';
import type { JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { Position } from '../codec/loaded';
import type { StoreSpec } from '../codec/store-spec';
import { bindingAt, bindingHolds, mtimeOf, type JournalBinding } from './cache-file';
import { appendBlock, type OpenLog } from './block-log';
import { EntryList, keyEntry, secondaryEntries, tallyEntry } from './entries';
import { dropIndexFiles, indexName, openIndexFile, type Manifest } from './index-base';
import { freeze, IndexTables, mergeStep, readsWhole } from './index-levels';
import { sumTally } from './tally';
import { IndexQueries } from './index-queries';
import { readTail, type Tail } from './index-lookup';
import { testHook } from '../../shared/test-hooks';

/** The log is frozen into a run once it holds this many entries (reads scan the whole log). */
export const LOG_MAX_ENTRIES = 8192;
/**
 * ... or, over a small base, once it holds an eighth of the base's entries, and at least this many: every command
 * that opens the index reads and checksums the whole log (a session put adds ~24 entries and ~0.97 KiB), and merging
 * a frozen run into a small base rewrites only that base. 192 keeps a small store's log under ~8.5 KiB (8 puts),
 * so that a `session get` checksums all it reads (the log, a page, the manifest: ~15 KiB) within the bytes a process
 * checksums before it loads node:zlib (derived/checksum.ts: ~2 ms, Node's streams with it); at 1,024 the log passed
 * them after 10 puts of every 40, and every such get loaded node:zlib. Over a base past 1,536 entries the eighth
 * rules, as before: the merge cost then grows with the base.
 */
const LOG_MIN_ENTRIES = 192;
/** CRUX_TEST_INDEX_LOG_ENTRIES sets the bound, so that tests merge often. */
const logMaxEntries = (manifest: Manifest) => {
  const forTest = Number(testHook('CRUX_TEST_INDEX_LOG_ENTRIES'));
  if (forTest > 0) return forTest;
  const base = manifest.parts.reduce((sum, part) => sum + part.entries, 0);
  return Math.min(LOG_MAX_ENTRIES, Math.max(LOG_MIN_ENTRIES, Math.floor(base / 8)));
};
/** A reader that finds this much journal past what the index covers writes a new base (temp + rename). */
const READER_REBUILD_GAP_BYTES = 256 * 1024;

export class StoreIndex<S> extends IndexQueries<S> {
  private readonly touched = new Set<string>();

  private constructor(
    root: string,
    spec: StoreSpec<S>,
    journalFd: number,
    tables: IndexTables,
    log: OpenLog | undefined,
    covered: JournalBinding,
    live: number,
    tail: Tail,
  ) {
    super(root, spec, journalFd, tables, log, covered, live, tail);
  }

  /**
   * Opens the index of the journal open at `journalFd`, or undefined when there is none that verifies and
   * describes a prefix of this journal (then the caller replays and rebuilds). The journal's records past
   * the index are read and verified here; damage among them also sends the caller to a full replay, which
   * reports it.
   */
  static open<S>(root: string, spec: StoreSpec<S>, journalFd: number): StoreIndex<S> | undefined {
    if (spec.keyOf === undefined) return undefined;
    let size: number;
    try {
      size = fs.fstatSync(journalFd).size;
    } catch {
      return undefined;
    }
    const opened = openIndexFile(root, spec);
    if (opened === undefined) return undefined;
    const { manifest } = opened;
    let log: OpenLog | undefined = opened.log;
    let covered = log.last!.binding;
    let live = log.last!.live;
    if (!bindingHolds(journalFd, size, covered, { prefix: true })) {
      // The log no longer applies (the journal is not the one it was written for), the manifest may: the log is left
      // out, and the next write appends after the manifest.
      if (log.blocks === 1 || !bindingHolds(journalFd, size, manifest.binding, { prefix: true })) return undefined;
      log = { ...log, entries: new EntryList(1), last: manifest, end: log.firstEnd, chain: log.firstChain, blocks: 1 };
      covered = manifest.binding;
      live = manifest.live;
    }
    const tail = readTail(spec, journalFd, size, covered);
    if (tail === undefined) return undefined;
    return new StoreIndex(root, spec, journalFd, new IndexTables(root, spec.file, manifest), log, covered, live, tail);
  }

  close(): void {
    this.tables.close();
  }

  /** Notes a record this transaction appended (its key line goes into the next log block). */
  appended(record: JournalRecord, at: LinePosition): void {
    tallyEntry(this.pending, this.spec, record);
    const key = keyEntry(this.pending, this.spec, record, at);
    if (key !== undefined) this.touched.add(key);
  }

  /**
   * After a transaction's appends (under the lock): writes what the index lacks — the journal tail it read,
   * the appended lines, the secondary keys of every entity they touched as `state` holds it — as one log
   * block, or, when the log would grow past LOG_MAX_ENTRIES, frozen with the log into a run of its own; then
   * one bounded merge step. `state` must hold every touched entity. A failure removes the log (the base then
   * covers less; nothing is ever trusted that is not whole).
   */
  persist(state: S, end: Position & { live: number }): void {
    const binding = bindingAt(end, mtimeOf(this.journalFd));
    const add = this.catchUp(state, binding.size);
    if (add === undefined) return;
    const logCount = this.log?.entries.count ?? 0;
    let tables = this.tables;
    let log: { entries: Uint32Array; meta: { binding: JournalBinding; live: number } } | undefined;
    if (logCount + add.count > logMaxEntries(this.tables.manifest)) {
      const next = freeze(this.root, this.spec, this.tables.manifest, this.logWith(add), binding, end.live);
      if (next === undefined) return;
      tables = new IndexTables(this.root, this.spec.file, next);
    } else {
      this.appendToLog(add, binding, end.live);
      // A merge step writes the index file anew: the log goes on after its new manifest.
      if (tables.manifest.frozen.length > 0) log = { entries: this.logWith(add).view(), meta: { binding, live: end.live } };
    }
    // Bounded work per write: the oldest frozen run merges into a few more partitions.
    try {
      if (!mergeStep(tables, this.root, this.spec, log)) this.drop();
    } finally {
      if (tables !== this.tables) tables.close();
    }
  }

  /**
   * Appends `add` as one block after the log's verified blocks. A block not written whole (a full disk, a crash) does
   * not verify, and the index covers less; a file replaced since it was read (a reader's freeze) is left alone.
   */
  private appendToLog(add: EntryList, binding: JournalBinding, live: number): void {
    const log = this.log;
    if (log === undefined) return;
    try {
      appendBlock(this.root, indexName(this.spec.file), log, add.view(), { binding, live });
    } catch {
      // Covered: what the index lacks is read from the journal, and the next write appends it.
    }
  }

  /** The log's entries, then `add`. */
  private logWith(add: EntryList): EntryList {
    const all = new EntryList(add.count + (this.log?.entries.count ?? 0));
    if (this.log !== undefined) all.append(this.log.entries);
    all.append(add);
    return all;
  }

  /**
   * What the index files lack: the tail's key lines, this transaction's, and the secondary keys of every
   * entity either touched (those the transaction touched as `state` holds them). undefined after damage.
   */
  private catchUp(state: S, version: number): EntryList | undefined {
    const add = new EntryList(this.tail.entries.count + this.pending.count + 16);
    add.append(this.tail.entries);
    add.append(this.pending);
    if (this.spec.secondary !== undefined) {
      const scratch = this.spec.initial();
      const untouched = [...this.tail.keys].filter((k) => !this.touched.has(k));
      if (untouched.length > 0 && !this.loadKeys(scratch, untouched)) {
        this.drop();
        return undefined;
      }
      for (const key of untouched) secondaryEntries(add, this.spec, scratch, key, version);
      for (const key of this.touched) secondaryEntries(add, this.spec, state, key, version);
    }
    return add;
  }

  /**
   * The tally's counts of the hours `from` to `to` (StoreSpec.tally; tally.ts), the records past the index from
   * the verified tail; undefined when a page read does not verify.
   */
  tally(from: number, to: number): number[][] | undefined {
    const series = this.spec.tally?.series.length ?? 0;
    let counts: number[][] | undefined;
    return readsWhole(() => (counts = sumTally(this.tables, [this.log?.entries, this.tail.entries], from, to, series))) ? counts : undefined;
  }

  /** Whether the index lies so far behind the journal that a reader writes a new base (refreshIfBehind). */
  get behind(): boolean {
    return this.gap >= READER_REBUILD_GAP_BYTES;
  }

  /**
   * For a reader, without the lock: when the journal runs far past the index files, a frozen run that covers
   * it all (a new generation: the old log no longer applies). Safe against writers: whatever they append
   * meanwhile is past this manifest's binding, and read from the journal until the next write indexes it.
   */
  refreshIfBehind(): void {
    if (!this.behind) return;
    const end = this.position();
    const binding = bindingAt(end, mtimeOf(this.journalFd));
    const add = this.catchUp(this.spec.initial(), binding.size);
    if (add !== undefined) freeze(this.root, this.spec, this.tables.manifest, this.logWith(add), binding, this.live);
  }

  /** Removes the index files: the next command rebuilds them. */
  drop(): void {
    dropIndexFiles(this.root, this.spec.file);
  }
}
