// The index of one store's journal: which lines concern each entity (the key lines), and which entities
// have each value of the store's named secondary keys — a base of sorted, checksummed pages
// (cache/<journal>.idx) and a log of checksummed blocks that writers append (cache/<journal>.idx-log).
//
// Trusted only as far as it verifies: the base's header and every page read, each log block, and the
// binding of the last verified block (or of the base) to the journal — the record at the head it names must
// still carry its hash. Records past what the index covers (a write whose log block was lost to a full disk
// or a crash, an index copied from an older state of the same journal) are read from the journal and
// verified, so the index is a prefix that the journal's own tail completes. Every line read through the index
// is decoded and verified like a replay's, and must concern the key asked for.
import { fs } from '../../shared/fs';
import type { ChainHead, JournalRecord } from '../record';
import { scanJournal, type LinePosition, type TornTail } from '../scan';
import type { IndexQuery, StoreSpec } from '../store-spec';
import {
  bindingHolds,
  cachePath,
  dropCacheFile,
  encodeHeader,
  isBinding,
  mtimeOf,
  newNonce,
  readHeader,
  readVerified,
  writeCacheFile,
  type JournalBinding,
} from './cache-file';
import { appendBlock, encodeLogHeader, readLog, type OpenLog } from './delta-log';
import { compareAt, ENTRY_WORDS, EntryList, FLAG_RESET, FLAG_WITHDRAWN, hash56, joinOffset, KEY_SPACE, sortKey, splitOffset } from './entries';
import { DerivedDamage, encodePages, PAGE_BYTES, PAGE_ENTRIES, PAGES_START, SortedTable } from './sorted-table';

const INDEX_KIND = 'crux-index';
export const INDEX_VERSION = 3;
/** The log is merged into a new base once it holds this many entries (reads scan the whole log). */
export const LOG_MAX_ENTRIES = 8192;
/** CRUX_TEST_INDEX_LOG_ENTRIES lowers the bound, so that tests merge often. */
const logMaxEntries = () => Number(process.env.CRUX_TEST_INDEX_LOG_ENTRIES) || LOG_MAX_ENTRIES;
const LOG_MAX_BYTES = 16 * 1024 * 1024;
/** A reader that finds this much journal past what the index covers writes a new base (temp + rename). */
export const READER_REBUILD_GAP_BYTES = 256 * 1024;

export const indexName = (file: string) => `${file}.idx`;
export const logName = (file: string) => `${file}.idx-log`;

interface BaseHeader {
  readonly kind: typeof INDEX_KIND;
  readonly v: number;
  /** The store's index declaration (its secondary names and version): another declaration's index is not read. */
  readonly store: string;
  readonly nonce: number;
  readonly binding: JournalBinding;
  readonly live: number;
  readonly entries: number;
  readonly pages: number;
}


const storeTag = (spec: StoreSpec<any>) => `${spec.file}:${spec.secondary?.version ?? 0}:${(spec.secondary?.names ?? []).join(',')}`;

/** The key line entry of a record, if its store keys it. */
function keyEntry(list: EntryList, spec: StoreSpec<any>, record: JournalRecord, at: LinePosition): string | undefined {
  const key = spec.keyOf?.(record);
  if (key === undefined) return undefined;
  const [hi, lo] = sortKey(KEY_SPACE, key);
  const [oh, ol] = splitOffset(at.offset);
  list.push(hi, lo, oh, ol, at.length, at.line, spec.resets?.(record) ? FLAG_RESET : 0, 0);
  return key;
}

/**
 * The secondary entries of one entity as it is in `state`, and withdrawals for the names it has no value of —
 * unless `withdraw` is false (a whole base, which holds no older value to withdraw: a withdrawal there sorts at
 * value 0 and would lengthen every range query from the start, as "expires by now" is).
 */
function secondaryEntries(list: EntryList, spec: StoreSpec<any>, state: unknown, key: string, version: number, withdraw = true): void {
  const secondary = spec.secondary;
  if (secondary === undefined) return;
  const values = secondary.values(state, key);
  const [kh, kl] = hash56(key);
  const [vh, vl] = splitOffset(version);
  secondary.names.forEach((_, i) => {
    const value = values[i];
    if (value === undefined) {
      if (withdraw) list.push(((1 + i) << 24) >>> 0, 0, kh, kl, vh, vl, FLAG_WITHDRAWN, 0);
    } else {
      const [hi, lo] = sortKey(1 + i, value);
      list.push(hi, lo, kh, kl, vh, vl, 0, 0);
    }
  });
}

interface Tail {
  readonly entries: EntryList;
  readonly keys: Set<string>;
  readonly head: ChainHead;
  readonly headAt: LinePosition | undefined;
  readonly lines: number;
  readonly bytes: number;
  readonly tornTail: TornTail | undefined;
}

/**
 * What a loaded state needs to continue the journal (a transaction appends after it): `bytes` and `lines`
 * count an unterminated tail, if there is one (the next append quarantines it).
 */
export interface Position {
  readonly head: ChainHead;
  readonly headAt?: LinePosition | undefined;
  readonly bytes: number;
  readonly lines: number;
  readonly tornTail: TornTail | undefined;
}

export class StoreIndex<S> {
  private pending = new EntryList(16);
  private byHash: Map<string, [EntryList, number][]> | undefined;
  private readonly touched = new Set<string>();

  private constructor(
    private readonly root: string,
    private readonly spec: StoreSpec<S>,
    private readonly journalFd: number,
    private readonly base: { header: BaseHeader; table: SortedTable; fd: number },
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
    let baseFd: number;
    try {
      size = fs.fstatSync(journalFd).size;
      baseFd = fs.openSync(cachePath(root, indexName(spec.file)), 'r');
    } catch {
      return undefined;
    }
    let ok = false;
    try {
      const header = readHeader<BaseHeader>(baseFd);
      if (header?.kind !== INDEX_KIND || header.v !== INDEX_VERSION || header.store !== storeTag(spec) || !isBinding(header.binding)) return undefined;
      const { entries, pages } = header;
      if (!Number.isSafeInteger(entries) || entries < 0 || pages !== Math.ceil(entries / PAGE_ENTRIES) || !Number.isInteger(header.nonce)) return undefined;
      if (fs.fstatSync(baseFd).size !== PAGES_START + pages * PAGE_BYTES) return undefined;
      const table = new SortedTable(baseFd, header.nonce, pages, entries);
      let log = readLog(cachePath(root, logName(spec.file)), INDEX_VERSION, LOG_MAX_BYTES);
      if (log !== undefined && (log.header.base !== header.nonce || log.last === undefined)) log = undefined;
      let covered = log?.last?.binding ?? header.binding;
      let live = log?.last?.live ?? header.live;
      if (!bindingHolds(journalFd, size, covered, { prefix: true })) {
        if (log === undefined || !bindingHolds(journalFd, size, header.binding, { prefix: true })) return undefined;
        log = undefined;
        covered = header.binding;
        live = header.live;
      }
      const tail = readTail(spec, journalFd, size, covered);
      if (tail === undefined) return undefined;
      ok = true;
      return new StoreIndex(root, spec, journalFd, { header, table, fd: baseFd }, log, covered, live, tail);
    } finally {
      if (!ok) fs.closeSync(baseFd);
    }
  }

  close(): void {
    fs.closeSync(this.base.fd);
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
    const [fromHi, fromLo] = 'equals' in query ? sortKey(space, query.equals) : [(space << 24) >>> 0, 0];
    const [toHi, toLo] = 'equals' in query ? [fromHi, fromLo] : sortKey(space, query.atMost);
    const hashes = new Map<string, [number, number]>();
    const take = (w: Uint32Array, j: number) => {
      const at = j * ENTRY_WORDS;
      if (w[at + 6]! & FLAG_WITHDRAWN) return;
      hashes.set(`${w[at + 2]}:${w[at + 3]}`, [w[at + 2]!, w[at + 3]!]);
    };
    try {
      this.base.table.range(fromHi, fromLo, toHi, toLo, take);
    } catch (error) {
      if (error instanceof DerivedDamage) return false;
      throw error;
    }
    const log = this.log?.entries;
    if (log !== undefined) {
      for (let j = 0; j < log.count; j++) {
        const w = log.words;
        const a = w[j * ENTRY_WORDS]!, b = w[j * ENTRY_WORDS + 1]!;
        if ((a > fromHi || (a === fromHi && b >= fromLo)) && (a < toHi || (a === toHi && b <= toLo))) take(w, j);
      }
    }
    // Entities written past the index have no secondary entries yet: each is a candidate.
    for (const key of this.tail.keys) {
      const [hi, lo] = hash56(key);
      hashes.set(`${hi}:${lo}`, [hi, lo]);
    }
    for (const [hi, lo] of hashes.values()) {
      if (!this.foldHash(state, ((0 << 24) | hi) >>> 0, lo, undefined)) return false;
    }
    return true;
  }

  /** Positions (journal order) of every line whose key hashes to (hi, lo), from the base, the log and the tail. */
  private linesOfHash(hi: number, lo: number): { at: LinePosition; reset: boolean }[] {
    const found: { at: LinePosition; reset: boolean }[] = [];
    const take = (w: Uint32Array, j: number) => {
      const x = j * ENTRY_WORDS;
      found.push({ at: { offset: joinOffset(w[x + 2]!, w[x + 3]!), length: w[x + 4]!, line: w[x + 5]! }, reset: (w[x + 6]! & FLAG_RESET) !== 0 });
    };
    this.base.table.range(hi, lo, hi, lo, take);
    for (const [list, j] of this.unsortedByHash().get(`${hi}:${lo}`) ?? []) take(list.words, j);
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
   * end back to each one's last resetting line.
   */
  private foldHash(state: S, hi: number, lo: number, key: string | undefined): boolean {
    let lines: { at: LinePosition; reset: boolean }[];
    try {
      lines = this.linesOfHash(hi, lo);
    } catch (error) {
      if (error instanceof DerivedDamage) return false;
      throw error;
    }
    const byKey = new Map<string, { record: JournalRecord; at: LinePosition }[]>();
    const done = new Set<string>();
    for (let i = lines.length - 1; i >= 0; i--) {
      const { at } = lines[i]!;
      const record = readVerified(this.journalFd, at);
      if (record === undefined) return false;
      const own = this.spec.keyOf!(record);
      if (own === undefined) return false;
      if ((key !== undefined && own !== key) || done.has(own)) continue;
      let list = byKey.get(own);
      if (list === undefined) byKey.set(own, (list = []));
      list.push({ record, at });
      if (this.spec.resets?.(record)) {
        done.add(own);
        // Without a collision, the key's earlier lines need not be read.
        if (key !== undefined || byKey.size === 1) break;
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
   * block, or as a new base when the log has grown past LOG_MAX_ENTRIES. `state` must hold every touched
   * entity. A failure removes the log (the base then covers less; nothing is ever trusted that is not whole).
   */
  persist(state: S, end: Position & { live: number }): void {
    const binding = bindingAt(end, mtimeOf(this.journalFd));
    const add = this.catchUp(state, binding.size);
    if (add === undefined) return;
    const logCount = this.log?.entries.count ?? 0;
    if (logCount + add.count > logMaxEntries()) {
      this.rebuild(add, binding, end.live);
      return;
    }
    const path = cachePath(this.root, logName(this.spec.file));
    try {
      let log = this.log;
      let at = log?.end;
      let nonce = log?.header.nonce;
      if (log === undefined || at === undefined || nonce === undefined) {
        nonce = newNonce();
        if (!writeCacheFile(this.root, logName(this.spec.file), [encodeLogHeader({ kind: 'crux-index-log', v: INDEX_VERSION, nonce, base: this.base.header.nonce })])) {
          throw new Error('log not written');
        }
        at = 512;
      }
      appendBlock(path, nonce, at, add.view(), { binding, live: end.live });
    } catch {
      dropCacheFile(this.root, logName(this.spec.file));
    }
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
   * For a reader, without the lock: when the journal runs far past the index files, a new base that covers
   * it all (temp + rename; the old log no longer applies to it). Safe against writers: whatever they append
   * meanwhile is past this base's binding, and read from the journal until the next write indexes it.
   */
  refreshIfBehind(): void {
    if (this.gap < READER_REBUILD_GAP_BYTES) return;
    const end = this.position();
    const binding = bindingAt(end, mtimeOf(this.journalFd));
    const add = this.catchUp(this.spec.initial(), binding.size);
    if (add !== undefined) this.rebuild(add, binding, this.live);
  }

  /** A new base: this one's entries, the log's and `add`, each entity's latest secondary entries only. */
  rebuild(add: EntryList, binding: JournalBinding, live: number): void {
    const extra = new EntryList(add.count + (this.log?.entries.count ?? 0));
    if (this.log !== undefined) extra.append(this.log.entries);
    extra.append(add);
    const latest = latestSecondaries(extra);
    const merged = new EntryList(this.base.header.entries + extra.count);
    const fresh = EntryList.of(keepLatest(extra, latest)).sorted();
    let f = 0;
    const freshCount = fresh.length / ENTRY_WORDS;
    try {
      this.base.table.all((w, i) => {
        const x = i * ENTRY_WORDS;
        // A secondary entry superseded by a later one of the same entity is dropped.
        if (w[x]! >>> 24 !== KEY_SPACE && latest.has(`${w[x]! >>> 24}:${w[x + 2]}:${w[x + 3]}`)) return;
        while (f < freshCount && compareAt(fresh, f, w, i) < 0) merged.pushFrom(fresh, f++);
        merged.pushFrom(w, i);
      });
    } catch (error) {
      if (!(error instanceof DerivedDamage)) throw error;
      this.drop();
      return;
    }
    while (f < freshCount) merged.pushFrom(fresh, f++);
    writeBase(this.root, this.spec, merged.view(), binding, live);
  }

  /** Removes the index files: the next command rebuilds them. */
  drop(): void {
    dropIndexFiles(this.root, this.spec.file);
  }
}

/** The (space, key hash) of every secondary entry in `list`, with the index of its latest entry. */
function latestSecondaries(list: EntryList): Map<string, number> {
  const latest = new Map<string, number>();
  const w = list.words;
  for (let j = 0; j < list.count; j++) {
    const x = j * ENTRY_WORDS;
    const space = w[x]! >>> 24;
    if (space === KEY_SPACE) continue;
    const id = `${space}:${w[x + 2]}:${w[x + 3]}`;
    const before = latest.get(id);
    if (before === undefined || joinOffset(w[before * ENTRY_WORDS + 4]!, w[before * ENTRY_WORDS + 5]!) <= joinOffset(w[x + 4]!, w[x + 5]!)) latest.set(id, j);
  }
  return latest;
}

/** `list` without superseded secondary entries and without withdrawals. */
function keepLatest(list: EntryList, latest: Map<string, number>): Uint32Array {
  const kept = new EntryList(list.count);
  const w = list.words;
  for (let j = 0; j < list.count; j++) {
    const x = j * ENTRY_WORDS;
    const space = w[x]! >>> 24;
    if (space !== KEY_SPACE && (latest.get(`${space}:${w[x + 2]}:${w[x + 3]}`) !== j || w[x + 6]! & FLAG_WITHDRAWN)) continue;
    kept.pushFrom(w, j);
  }
  return kept.view();
}

/** The binding of a loaded position: the journal up to its last whole line. */
export function bindingAt(end: Position, mtime_ns: string): JournalBinding {
  return {
    mtime_ns,
    size: end.tornTail?.offset ?? end.bytes,
    lines: end.tornTail ? end.tornTail.line - 1 : end.lines,
    seq: end.head.seq,
    h: end.head.seq === 0 ? '' : end.head.h,
    head_offset: end.headAt?.offset ?? 0,
    head_length: end.headAt?.length ?? 0,
  };
}

/** The journal's records past `covered`, verified; undefined when any of them does not verify. */
function readTail(spec: StoreSpec<any>, fd: number, size: number, covered: JournalBinding): Tail | undefined {
  const entries = new EntryList(16);
  const keys = new Set<string>();
  const head = { seq: covered.seq, h: covered.h };
  const atHead = covered.seq === 0 ? undefined : { line: covered.lines, offset: covered.head_offset, length: covered.head_length };
  if (size === covered.size) return { entries, keys, head, headAt: atHead, lines: covered.lines, bytes: size, tornTail: undefined };
  const scan = scanJournal(fd, spec.vocabulary, (record, at) => {
    const key = keyEntry(entries, spec, record, at);
    if (key !== undefined) keys.add(key);
  }, covered.seq === 0 ? undefined : { offset: covered.size, line: covered.lines, head });
  if (scan.problems.some((p) => p.offset !== scan.tornTail?.offset)) return undefined;
  return { entries, keys, head: scan.head, headAt: scan.headAt ?? atHead, lines: scan.lines, bytes: scan.bytes, tornTail: scan.tornTail };
}

/** Writes a whole new base (temp + rename) and removes the log it replaces. */
export function writeBase(root: string, spec: StoreSpec<any>, sorted: Uint32Array, binding: JournalBinding, live: number): void {
  const nonce = newNonce();
  const entries = sorted.length / ENTRY_WORDS;
  const header = encodeHeader({ kind: INDEX_KIND, v: INDEX_VERSION, store: storeTag(spec), nonce, binding, live, entries, pages: Math.ceil(entries / PAGE_ENTRIES) });
  const padding = Buffer.alloc(PAGES_START - header.length);
  // The log names the base it extends: once the new base is in place, the old log no longer applies.
  if (!writeCacheFile(root, indexName(spec.file), [header, padding, encodePages(sorted, nonce)])) dropIndexFiles(root, spec.file);
  else dropCacheFile(root, logName(spec.file));
}

/**
 * A whole index from a full replay: every record's key line (`records`, in journal order) and every entity's
 * secondary keys as `state` holds them.
 */
export function buildIndex<S>(root: string, spec: StoreSpec<S>, state: S, records: EntryList, keys: Iterable<string>, end: Position & { live: number; mtime_ns: string }): void {
  const all = new EntryList(records.count + 16);
  all.append(records);
  const binding = bindingAt(end, end.mtime_ns);
  for (const key of keys) secondaryEntries(all, spec, state, key, binding.size, false);
  writeBase(root, spec, all.sorted(), binding, end.live);
}

/** Collects key lines during a replay, for buildIndex. */
export class KeyLines {
  readonly entries = new EntryList(1024);
  readonly keys = new Set<string>();
  constructor(private readonly spec: StoreSpec<any>) {}
  add(record: JournalRecord, at: LinePosition): string | undefined {
    const key = keyEntry(this.entries, this.spec, record, at);
    if (key !== undefined) this.keys.add(key);
    return key;
  }
}

export function dropIndexFiles(root: string, file: string): void {
  dropCacheFile(root, logName(file));
  dropCacheFile(root, indexName(file));
}

/** What `crux doctor` says of a store's index. */
export function describeIndex(root: string, spec: StoreSpec<any>, journalPath: string): 'valid' | 'stale' | 'absent' {
  let fd: number;
  try {
    fd = fs.openSync(journalPath, 'r');
  } catch {
    return 'absent';
  }
  try {
    const index = StoreIndex.open(root, spec, fd);
    if (index === undefined) return fs.existsSync(cachePath(root, indexName(spec.file))) ? 'stale' : 'absent';
    const gap = index.gap;
    index.close();
    return gap === 0 ? 'valid' : 'stale';
  } finally {
    fs.closeSync(fd);
  }
}
