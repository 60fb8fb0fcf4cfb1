// Reading one store's index: the key lines of an entity (from the base's runs, the log, the journal's verified tail
// and this transaction's own appends), and folding an entity from its own lines, verified like a replay's and
// required to concern the key asked for. The shared state of an open index lives here; reads by value
// (index-queries.ts) and the writer's upkeep (store-index.ts) build on it.
import type { JournalRecord } from '../codec/record';
import type { ChainHead } from '../codec/record';
import { isDamaged, scanJournal, type LinePosition, type TornTail } from '../codec/scan';
import type { Position } from '../codec/loaded';
import type { StoreSpec } from '../codec/store-spec';
import { readVerified, type JournalBinding } from './cache-file';
import type { OpenLog } from './block-log';
import { ENTRY_WORDS, EntryList, FLAG_RESET, joinOffset, KEY_SPACE, keyEntry, secondaryEntries, sortKey, tallyEntry } from './entries';
import { type IndexTables, readsWhole } from './index-levels';

/**
 * Lookups that scan the log's and the tail's entries (up to 8,192 of them, a few µs) before a map of them by key
 * hash is built: building it costs a string and a map entry for every one (~4 M instructions at a few hundred
 * puts, ~1.5 ms), which a command on one entity never earns back.
 */
const SCANNED_LOOKUPS = 4;

/** What an index does not cover yet: the journal's records past its binding, read and verified as a replay reads them. */
export interface Tail {
  readonly entries: EntryList;
  readonly keys: Set<string>;
  readonly head: ChainHead;
  readonly headAt: LinePosition | undefined;
  readonly lines: number;
  readonly bytes: number;
  readonly tornTail: TornTail | undefined;
}

/** The journal's records past `covered` (a write whose log block was lost, an index older than its journal), verified; undefined when any does not verify. */
export function readTail(spec: StoreSpec<any>, fd: number, size: number, covered: JournalBinding): Tail | undefined {
  const entries = new EntryList(16);
  const keys = new Set<string>();
  const head = { seq: covered.seq, h: covered.h };
  const atHead = covered.seq === 0 ? undefined : { line: covered.lines, offset: covered.head_offset, length: covered.head_length };
  if (size === covered.size) return { entries, keys, head, headAt: atHead, lines: covered.lines, bytes: size, tornTail: undefined };
  const from = covered.seq === 0 ? undefined : { offset: covered.size, line: covered.lines, head };
  const scan = scanJournal(
    fd,
    spec.vocabulary,
    (record, at) => {
      tallyEntry(entries, spec, record);
      const key = keyEntry(entries, spec, record, at);
      if (key !== undefined) keys.add(key);
    },
    from,
  );
  if (isDamaged(scan)) return undefined;
  return { entries, keys, head: scan.head, headAt: scan.headAt ?? atHead, lines: scan.lines, bytes: scan.bytes, tornTail: scan.tornTail };
}

/** A key line of the index: where it is, whether it resets its entity, and its key's second hash (0: not known). */
interface KeyLine {
  readonly at: LinePosition;
  readonly reset: boolean;
  readonly check: number;
}

/** An open index's state — the manifest's runs, the log, the verified tail, this transaction's lines — and its lookups by key. */
export abstract class IndexLookup<S> {
  protected pending = new EntryList(16);
  private byHash: Map<string, [EntryList, number][]> | undefined;
  private lookups = 0;

  protected constructor(
    protected readonly root: string,
    protected readonly spec: StoreSpec<S>,
    protected readonly journalFd: number,
    protected readonly tables: IndexTables,
    protected readonly log: OpenLog | undefined,
    protected readonly covered: JournalBinding,
    readonly live: number,
    protected readonly tail: Tail,
  ) {}

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
   * Every line of the entity `key`, in journal order (none passed over at a resetting line: a history read wants
   * every version), each verified and required to be of that key; undefined when one is not (a replay tells why).
   */
  keyRecords(key: string): { record: JournalRecord; at: LinePosition }[] | undefined {
    const [hi, lo] = sortKey(KEY_SPACE, key);
    const lines = this.linesOfHash(hi, lo);
    if (lines === undefined) return undefined;
    const found: { record: JournalRecord; at: LinePosition }[] = [];
    for (const { at } of lines) {
      const record = readVerified(this.journalFd, at);
      const own = record === undefined ? undefined : this.spec.keyOf!(record);
      if (record === undefined || own === undefined) return undefined;
      const [ownHi, ownLo] = sortKey(KEY_SPACE, own);
      if (ownHi !== hi >>> 0 || ownLo !== lo >>> 0) return undefined;
      if (own === key) found.push({ record, at });
    }
    return found;
  }

  /** Keys whose lines were read or written through this index, for the live estimate. */
  linesOf(key: string): LinePosition[] {
    const [hi, lo] = sortKey(KEY_SPACE, key);
    return this.linesOfHash(hi, lo)?.map((l) => l.at) ?? [];
  }

  /**
   * The log's entries, and the secondary entries of every entity written past the index as its own lines fold
   * it now (versioned after everything indexed, so that they supersede the entity's older entries): what a read
   * by value merges into the partitions' entries. undefined when a tail line does not verify.
   */
  protected writtenSince(): EntryList | undefined {
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
   * Positions (journal order) of every line whose key hashes to (hi, lo), from the base, the log and the tail,
   * each with its key's second hash (0: not known); undefined when a page read does not verify.
   */
  private linesOfHash(hi: number, lo: number): KeyLine[] | undefined {
    const found: KeyLine[] = [];
    const take = (w: Uint32Array, j: number) => {
      const x = j * ENTRY_WORDS;
      found.push({
        at: { offset: joinOffset(w[x + 2]!, w[x + 3]!), length: w[x + 4]!, line: w[x + 5]! },
        reset: (w[x + 6]! & FLAG_RESET) !== 0,
        check: w[x + 7]!,
      });
    };
    if (!readsWhole(() => this.tables.range(hi, lo, hi, lo, take))) return undefined;
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
   * keys, every line is read. The keys folded go into `folded` when given.
   */
  protected foldHash(state: S, hi: number, lo: number, key: string | undefined, folded?: string[]): boolean {
    const lines = this.linesOfHash(hi, lo);
    if (lines === undefined) return false;
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
    folded?.push(...byKey.keys());
    return true;
  }
}
