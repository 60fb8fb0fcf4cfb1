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
// (Past 300 lines: an open index's reads and its writer's upkeep share one state — the manifest's runs, the
// log, the verified tail and this transaction's lines — and split apart they would pass it all back and forth.)
import { fs } from '../../shared/fs';
import { expectHashUnits } from '../../shared/sha256';
import type { JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { Position } from '../codec/loaded';
import type { IndexQuery, StoreSpec } from '../codec/store-spec';
import { bindingHolds, dropCacheFile, mtimeOf, newNonce, readVerified, writeCacheFile, type JournalBinding } from './cache-file';
import { appendBlock, chainStart, encodeLogHeader, LOG_VERSION, readLog, type OpenLog } from './delta-log';
import { compareAt, ENTRY_WORDS, EntryList, FLAG_RESET, FLAG_WITHDRAWN, hash56, joinOffset, KEY_SPACE, sortKey, textRange } from './entries';
import { entityOf, keyEntry, secondaryEntries, valueKey } from './index-entries';
import { dropIndexFiles, logName, openManifest, type Manifest } from './index-base';
import { freeze, IndexTables, mergeStep, RunMissing } from './index-levels';
import { bindingAt, readTail, type Tail } from './index-tail';
import { NewestOutOfStep, newestInRange, type Newest } from './index-newest';
import { DerivedDamage } from './sorted-table';
import { testHook } from '../../shared/test-hooks';

/** The log is frozen into a run once it holds this many entries (reads scan the whole log). */
export const LOG_MAX_ENTRIES = 8192;
/**
 * ... or, over a small base, once it holds an eighth of the base's entries, and at least this many: every command
 * that opens the index reads the whole log (a put adds ~11 entries and ~0.5 KB), and merging a frozen run into a
 * small base rewrites only that base (a get over a log of 8,192 entries cost ~0.7 ms more than over an empty one).
 */
const LOG_MIN_ENTRIES = 1024;
/** CRUX_TEST_INDEX_LOG_ENTRIES sets the bound, so that tests merge often. */
const logMaxEntries = (manifest: Manifest) => {
  const forTest = Number(testHook('CRUX_TEST_INDEX_LOG_ENTRIES'));
  if (forTest > 0) return forTest;
  const base = manifest.parts.reduce((sum, part) => sum + part.entries, 0);
  return Math.min(LOG_MAX_ENTRIES, Math.max(LOG_MIN_ENTRIES, Math.floor(base / 8)));
};
const LOG_MAX_BYTES = 16 * 1024 * 1024;
/** Entities a limited read folds between two looks at whether it has enough (loadNewest). */
const BATCH = 16;
/** Entities of the value a limited read stops at, read past its batch so that the caller orders equals (loadNewest). */
const TIE_READS = 16;
/**
 * About the fewest UTF-16 units a record line has (a session's or a case's, its hash and chain fields ~150): a read that
 * will verify n lines tells the hashing beforehand it hashes about n times this (shared/sha256.ts: many lines are
 * hashed by node:crypto, loaded at once; a few by @noble/hashes).
 */
const LINE_UNITS = 256;
/**
 * Lookups that scan the log's and the tail's entries (up to 8,192 of them, a few µs) before a map of them by key
 * hash is built: building it costs a string and a map entry for every one (~4 M instructions at a few hundred
 * puts, ~1.5 ms), which a command on one entity never earns back.
 */
const SCANNED_LOOKUPS = 4;
/** A reader that finds this much journal past what the index covers writes a new base (temp + rename). */
const READER_REBUILD_GAP_BYTES = 256 * 1024;

/** A key line of the index: where it is, whether it resets its entity, and its key's second hash (0: not known). */
interface KeyLine {
  readonly at: LinePosition;
  readonly reset: boolean;
  readonly check: number;
}

export class StoreIndex<S> {
  private pending = new EntryList(16);
  private byHash: Map<string, [EntryList, number][]> | undefined;
  private lookups = 0;
  private readonly touched = new Set<string>();

  private constructor(
    private readonly root: string,
    private readonly spec: StoreSpec<S>,
    private readonly journalFd: number,
    private readonly tables: IndexTables,
    private readonly log: OpenLog | undefined,
    private readonly covered: JournalBinding,
    readonly live: number,
    private readonly tail: Tail,
  ) {}

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

  /** Where the journal ends, as the index and the verified tail after it describe it. */
  position(): Position {
    const t = this.tail;
    return { head: t.head, headAt: t.headAt, bytes: t.bytes, lines: t.lines, tornTail: t.tornTail };
  }

  /** Journal bytes past what the index files cover (read from the journal on every open until written). */
  get gap(): number {
    return (this.tail.tornTail?.offset ?? this.tail.bytes) - this.covered.size;
  }

  /** Folds the entities `keys` into `state` from their own lines; false when a line does not verify. */
  loadKeys(state: S, keys: Iterable<string>): boolean {
    for (const key of keys) {
      const [hi, lo] = sortKey(KEY_SPACE, key);
      if (!this.foldHash(state, hi, lo, key)) return false;
    }
    return true;
  }

  /**
   * Folds into `state` every entity that may match `query` — every one that does, and some that no longer
   * do (the caller filters exactly); false when a line does not verify.
   */
  loadCandidates(state: S, query: IndexQuery): boolean {
    const secondary = this.spec.secondary;
    const i = secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0) throw new Error(`${this.spec.file}: no secondary key ${query.index}`);
    const space = 1 + i;
    const [fromHi, fromLo] = 'equals' in query ? valueKey(this.spec, i, query.equals) : [(space << 24) >>> 0, 0];
    const [toHi, toLo] = 'equals' in query ? [fromHi, fromLo] : sortKey(space, query.atMost);
    const hashes = new Map<string, [number, number]>();
    const take = (w: Uint32Array, j: number) => {
      const at = j * ENTRY_WORDS;
      if (w[at + 6]! & FLAG_WITHDRAWN) return;
      hashes.set(`${w[at + 2]}:${w[at + 3]}`, [w[at + 2]!, w[at + 3]!]);
    };
    try {
      this.tables.range(fromHi, fromLo, toHi, toLo, take);
    } catch (error) {
      if (error instanceof DerivedDamage && !(error instanceof RunMissing)) return false;
      throw error;
    }
    const log = this.log?.entries;
    if (log !== undefined) {
      for (let j = 0; j < log.count; j++) {
        const w = log.words;
        const a = w[j * ENTRY_WORDS]!,
          b = w[j * ENTRY_WORDS + 1]!;
        if ((a > fromHi || (a === fromHi && b >= fromLo)) && (a < toHi || (a === toHi && b <= toLo))) take(w, j);
      }
    }
    // Entities written past the index have no secondary entries yet: each is a candidate.
    for (const key of this.tail.keys) {
      const [hi, lo] = hash56(key);
      hashes.set(`${hi}:${lo}`, [hi, lo]);
    }
    expectHashUnits(hashes.size * LINE_UNITS);
    for (const [hi, lo] of hashes.values()) {
      if (!this.foldHash(state, ((0 << 24) | hi) >>> 0, lo, undefined)) return false;
    }
    return true;
  }

  /**
   * Folds into `state` the entities whose value of the ordered key `query.index` is at most `query.atMost`,
   * highest value first, until `enough(state)`. Returns how many entities are in that range (`total`: unless
   * `query.count` is false, which reads only the pages of the entities folded), or undefined after damage.
   */
  loadNewest(state: S, query: { index: string; atMost: number; count?: boolean }, enough: (state: S) => boolean): { total: number | undefined } | undefined {
    const i = this.spec.secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0) throw new Error(`${this.spec.file}: no secondary key ${query.index}`);
    // Entities written past the index take their places by value, as if indexed (their values as their own lines
    // fold them now), never first: a tail of earlier times (a restored cache/, another host's clock) read first
    // pushed newer entities out of a limited list.
    const written = this.writtenSince();
    if (written === undefined) return undefined;
    let newest: Newest;
    try {
      newest = newestInRange(this.tables, written, 1 + i, query.atMost, { count: query.count });
      // In batches (a candidate may no longer match: the caller's exact filter says so), and not stopping
      // between two of one value, so that the caller orders equals its own way — up to TIE_READS of them (an
      // import that gave thousands one time): past that, equals come in the index's order.
      let next = newest.next();
      if (next !== undefined) expectHashUnits(Math.min(newest.total ?? BATCH, BATCH) * LINE_UNITS);
      while (next !== undefined && !enough(state)) {
        let last: number | undefined;
        for (let n = 0, ties = 0; next !== undefined && (n < BATCH || (next[2] === last && ties++ < TIE_READS)); n++, next = newest.next()) {
          if (!this.foldHash(state, next[0] >>> 0, next[1], undefined)) return undefined;
          last = next[2];
        }
      }
    } catch (error) {
      // A page (read while counting, or on demand) that does not verify, or an index out of step with its
      // runs: dropped and rebuilt.
      if ((error instanceof DerivedDamage && !(error instanceof RunMissing)) || error instanceof NewestOutOfStep) return undefined;
      throw error;
    }
    return { total: newest.total };
  }

  /**
   * The log's entries, and the secondary entries of every entity written past the index as its own lines fold
   * it now (versioned after everything indexed, so that they supersede the entity's older entries): what a read
   * by value merges into the partitions' entries. undefined when a tail line does not verify.
   */
  private writtenSince(): EntryList | undefined {
    const log = this.log?.entries;
    const keys = [...this.tail.keys];
    if (keys.length === 0) return log ?? new EntryList(1);
    const scratch = this.spec.initial();
    if (!this.loadKeys(scratch, keys)) return undefined;
    const names = this.spec.secondary?.names.length ?? 0;
    const all = new EntryList((log?.count ?? 0) + keys.length * names + 1);
    if (log !== undefined) all.append(log);
    for (const key of keys) secondaryEntries(all, this.spec, scratch, key, this.tail.bytes);
    return all;
  }

  /**
   * Folds into `state` the entities whose value of the prefixed key `query.index` starts with `query.prefix`,
   * in the order of the values' leading bytes (those written past the index in their places too), until
   * `enough(state)` and then every entity that ties with the last one read — so that an entity left out sorts
   * after every one read. Candidates come from every entry in the range: an entity's prefixed value is its
   * own, and a stale candidate (deleted since) costs a read, never an answer (the caller filters exactly).
   * False after damage.
   */
  loadPrefix(state: S, query: { index: string; prefix: string }, enough: (state: S) => boolean): boolean {
    const secondary = this.spec.secondary;
    const i = secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0 || !secondary?.prefixed?.includes(query.index)) throw new Error(`${this.spec.file}: no prefixed secondary key ${query.index}`);
    const [fromHi, fromLo, toHi, toLo] = textRange(1 + i, query.prefix);
    const written = this.writtenSince();
    if (written === undefined) return false;
    const seen = new Set<string>();
    const inRange = (w: Uint32Array, x: number) =>
      !(w[x + 6]! & FLAG_WITHDRAWN) && (w[x]! > fromHi || (w[x] === fromHi && w[x + 1]! >= fromLo)) && (w[x]! < toHi || (w[x] === toHi && w[x + 1]! <= toLo));
    // The frozen runs', the log's and the tail's entries in the range (few), in order, merged into the partitions' as they come.
    const extra = new EntryList(64);
    try {
      for (const run of this.tables.manifest.frozen) this.tables.table(run).range(fromHi, fromLo, toHi, toLo, (w, j) => extra.pushFrom(w, j));
    } catch (error) {
      if (error instanceof DerivedDamage && !(error instanceof RunMissing)) return false;
      throw error;
    }
    for (let j = 0; j < written.count; j++) if (inRange(written.words, j * ENTRY_WORDS)) extra.pushFrom(written.words, j);
    const sorted = extra.sorted();
    let e = 0;
    let read = 0;
    let stopAt: [number, number] | undefined;
    let failed = false;
    // One candidate, in order: read unless seen; true when the read is done (enough, and past the ties).
    const offer = (w: Uint32Array, j: number): boolean => {
      const x = j * ENTRY_WORDS;
      if (w[x + 6]! & FLAG_WITHDRAWN) return false;
      if (stopAt !== undefined && (w[x]! > stopAt[0] || (w[x] === stopAt[0] && w[x + 1]! > stopAt[1]))) return true;
      const id = entityOf(w, x);
      if (seen.has(id)) return false;
      seen.add(id);
      if (!this.foldHash(state, w[x + 2]!, w[x + 3]!, undefined)) {
        failed = true;
        return true;
      }
      // enough() is asked every 16 reads (it may cost what the caller's filter costs).
      if (stopAt === undefined && ++read % 16 === 0 && enough(state)) stopAt = [w[x]!, w[x + 1]!];
      return false;
    };
    let done: boolean;
    try {
      done = this.tables.partSpans(fromHi, fromLo, toHi, toLo, (w, start, end) => {
        for (let j = start; j < end; j++) {
          while (e < sorted.length / ENTRY_WORDS && compareAt(sorted, e, w, j) < 0) if (offer(sorted, e++)) return true;
          if (offer(w, j)) return true;
        }
        return false;
      });
    } catch (error) {
      if (error instanceof DerivedDamage && !(error instanceof RunMissing)) return false;
      throw error;
    }
    while (!done && e < sorted.length / ENTRY_WORDS) done = offer(sorted, e++);
    return !failed;
  }

  /**
   * Positions (journal order) of every line whose key hashes to (hi, lo), from the base, the log and the tail,
   * each with its key's second hash (0: not known).
   */
  private linesOfHash(hi: number, lo: number): KeyLine[] {
    const found: KeyLine[] = [];
    const take = (w: Uint32Array, j: number) => {
      const x = j * ENTRY_WORDS;
      found.push({
        at: { offset: joinOffset(w[x + 2]!, w[x + 3]!), length: w[x + 4]!, line: w[x + 5]! },
        reset: (w[x + 6]! & FLAG_RESET) !== 0,
        check: w[x + 7]!,
      });
    };
    this.tables.range(hi, lo, hi, lo, take);
    // The log's and the tail's entries: scanned for the first few lookups (a command on one entity makes one or
    // two), through a map by key hash after that.
    if (this.byHash === undefined && ++this.lookups <= SCANNED_LOOKUPS) {
      // By the typed array's own indexOf (native, where a loop of JS runs cold over thousands of entries): any word
      // may equal hi, so a find counts only at an entry's first word.
      for (const list of [this.log?.entries, this.tail.entries]) {
        if (list === undefined) continue;
        const w = list.words;
        const end = list.count * ENTRY_WORDS;
        for (let x = w.indexOf(hi); x !== -1 && x < end; x = w.indexOf(hi, x + 1)) if (x % ENTRY_WORDS === 0 && w[x + 1] === lo) take(w, x / ENTRY_WORDS);
      }
    } else for (const [list, j] of this.unsortedByHash().get(`${hi}:${lo}`) ?? []) take(list.words, j);
    // This transaction's own lines (a few): scanned.
    const w = this.pending.words;
    for (let j = 0; j < this.pending.count; j++) if (w[j * ENTRY_WORDS] === hi && w[j * ENTRY_WORDS + 1] === lo) take(w, j);
    return found.sort((a, b) => a.at.offset - b.at.offset);
  }

  /** The log's and the tail's key lines by key hash (built once: a query may look up thousands of keys). */
  private unsortedByHash(): Map<string, [EntryList, number][]> {
    if (this.byHash !== undefined) return this.byHash;
    const map = new Map<string, [EntryList, number][]>();
    for (const list of [this.log?.entries, this.tail.entries]) {
      if (list === undefined) continue;
      const w = list.words;
      for (let j = 0; j < list.count; j++) {
        if (w[j * ENTRY_WORDS]! >>> 24 !== KEY_SPACE) continue;
        const id = `${w[j * ENTRY_WORDS]}:${w[j * ENTRY_WORDS + 1]}`;
        const at = map.get(id);
        if (at === undefined) map.set(id, [[list, j]]);
        else at.push([list, j]);
      }
    }
    return (this.byHash = map);
  }

  /**
   * Folds the entities whose key hashes to (hi, lo) — only `key` when given — reading their lines from the
   * end back to each one's last resetting line. Without `key`, the lines may be several entities' (keys that
   * share the 56 bits): reading stops early only once every second hash among them has met its resetting
   * line, and with a second hash not known (0: an entry from before they were kept), or one met with two
   * keys, every line is read.
   */
  private foldHash(state: S, hi: number, lo: number, key: string | undefined): boolean {
    let lines: KeyLine[];
    try {
      lines = this.linesOfHash(hi, lo);
    } catch (error) {
      if (error instanceof DerivedDamage && !(error instanceof RunMissing)) return false;
      throw error;
    }
    const byKey = new Map<string, { record: JournalRecord; at: LinePosition }[]>();
    const done = new Set<string>();
    const checks = new Set(lines.map((l) => l.check));
    let whole = checks.has(0);
    const keyOfCheck = new Map<number, string>();
    const checksDone = new Set<number>();
    for (let i = lines.length - 1; i >= 0; i--) {
      const { at, check } = lines[i]!;
      const record = readVerified(this.journalFd, at);
      if (record === undefined) return false;
      const own = this.spec.keyOf!(record);
      if (own === undefined) return false;
      // A line of a key that hashes elsewhere: the journal changed under the index (two lines of one length
      // swapped), and only a replay tells what the store holds.
      const [ownHi, ownLo] = sortKey(KEY_SPACE, own);
      if (ownHi !== hi >>> 0 || ownLo !== lo >>> 0) return false;
      if (key === undefined && keyOfCheck.get(check) !== own) {
        if (keyOfCheck.has(check)) whole = true;
        keyOfCheck.set(check, own);
      }
      if ((key !== undefined && own !== key) || done.has(own)) continue;
      let list = byKey.get(own);
      if (list === undefined) byKey.set(own, (list = []));
      list.push({ record, at });
      if (this.spec.resets?.(record)) {
        done.add(own);
        checksDone.add(check);
        // The earlier lines of the key (of every key, without one) need not be read.
        if (key !== undefined || (!whole && checksDone.size === checks.size)) break;
      }
    }
    for (const list of byKey.values()) for (let i = list.length - 1; i >= 0; i--) this.spec.evolve(state, list[i]!.record, list[i]!.at);
    return true;
  }

  /** Notes a record this transaction appended (its key line goes into the next log block). */
  appended(record: JournalRecord, at: LinePosition): void {
    const key = keyEntry(this.pending, this.spec, record, at);
    if (key !== undefined) this.touched.add(key);
  }

  /** Keys whose lines were read or written through this index, for the live estimate. */
  linesOf(key: string): LinePosition[] {
    const [hi, lo] = sortKey(KEY_SPACE, key);
    return this.linesOfHash(hi, lo).map((l) => l.at);
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
