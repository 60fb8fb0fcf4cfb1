// The index of one store's journal: which lines concern each entity (the key lines), and which entities
// have each value of the store's named secondary keys — a base of sorted runs of checksummed pages named by a
// manifest (index-base.ts, index-levels.ts) and a log of checksummed blocks that writers append (delta-log.ts).
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
import { bindingAt, bindingHolds, dropCacheFile, mtimeOf, newNonce, writeCacheFile, type JournalBinding } from './cache-file';
import { appendBlock, chainStart, encodeLogHeader, LOG_VERSION, readLog, type OpenLog } from './delta-log';
import { EntryList, keyEntry, secondaryEntries, tallyEntry } from './entries';
import { dropIndexFiles, logName, openManifest, type Manifest } from './index-base';
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
const LOG_MAX_BYTES = 16 * 1024 * 1024;
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
    const manifest = openManifest(root, spec);
    if (manifest === undefined) return undefined;
    let log = readLog(root, logName(spec.file), LOG_VERSION, LOG_MAX_BYTES);
    if (log !== undefined && (log.header.base !== manifest.nonce || log.last === undefined)) log = undefined;
    let covered = log?.last?.binding ?? manifest.binding;
    let live = log?.last?.live ?? manifest.live;
    if (!bindingHolds(journalFd, size, covered, { prefix: true })) {
      if (log === undefined || !bindingHolds(journalFd, size, manifest.binding, { prefix: true })) return undefined;
      log = undefined;
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
    if (logCount + add.count > logMaxEntries(this.tables.manifest)) {
      const next = this.freeze(add, binding, end.live);
      if (next === undefined) return;
      tables = new IndexTables(this.root, this.spec.file, next);
    } else this.appendToLog(add, binding, end.live);
    // Bounded work per write: the oldest frozen run merges into a few more partitions.
    try {
      if (!mergeStep(tables, this.root, this.spec)) this.drop();
    } finally {
      if (tables !== this.tables) tables.close();
    }
  }

  private appendToLog(add: EntryList, binding: JournalBinding, live: number): void {
    try {
      const log = this.log;
      let at = log?.end;
      let nonce = log?.header.nonce;
      let chain = log?.chain;
      if (log === undefined || at === undefined || nonce === undefined || chain === undefined) {
        nonce = newNonce();
        if (
          !writeCacheFile(this.root, logName(this.spec.file), [
            encodeLogHeader({ kind: 'crux-index-log', v: LOG_VERSION, nonce, base: this.tables.manifest.nonce }),
          ])
        ) {
          throw new Error('log not written');
        }
        at = 512;
        chain = chainStart(nonce);
      }
      appendBlock(this.root, logName(this.spec.file), nonce, chain, at, add.view(), { binding, live });
    } catch {
      dropCacheFile(this.root, logName(this.spec.file));
    }
  }

  /** The log's entries and `add` as a new frozen run (a new generation: the log is removed). */
  private freeze(add: EntryList, binding: JournalBinding, live: number): Manifest | undefined {
    const extra = new EntryList(add.count + (this.log?.entries.count ?? 0));
    if (this.log !== undefined) extra.append(this.log.entries);
    extra.append(add);
    const next = freeze(this.root, this.spec, this.tables.manifest, extra, binding, live);
    if (next !== undefined) dropCacheFile(this.root, logName(this.spec.file));
    return next;
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
    if (add !== undefined) this.freeze(add, binding, this.live);
  }

  /** Removes the index files: the next command rebuilds them. */
  drop(): void {
    dropIndexFiles(this.root, this.spec.file);
  }
}
