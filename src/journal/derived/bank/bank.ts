// The case bank's storage: the folded state of cases.jsonl, in columns (one slot per case version) with an
// inverted index (term → slots), so that it is compact, fast to rank over, and serializable for a replay cache.
// It holds a case's facts (what ranking reads) and where its record is (see `position`), never its text: the
// domain's CaseBank (domain/case/bank.ts) folds the records into it and keeps the bodies it read.
import type { LinePosition } from '../../codec/scan';
import { f64, u32, u8, type Column } from './columns';
import { checkColumns, emptyColumns, packMeta, type BankChanges, type BankColumns, type BankFacts, type LazyColumns } from './layout';
import { firstAtLeast } from './key-search';

export class Bank {
  readonly alive: Column<Uint8Array>;
  readonly reward: Column<Float64Array>;
  /** created_at as epoch milliseconds, for ranking. */
  readonly created: Column<Float64Array>;
  readonly success: Column<Uint8Array>;
  readonly reused: Column<Float64Array>;
  /** How many distinct terms the slot's case has (the union needs it). */
  readonly termCount: Column<Uint32Array>;
  /** Where the record that carries the slot's fields sits in the journal. */
  readonly recOffset: Column<Float64Array>;
  readonly recLength: Column<Uint32Array>;
  readonly recLine: Column<Uint32Array>;
  /** Term id → term. */
  readonly vocab: string[];
  liveCount = 0;
  liveRecordBytes = 0;
  private readonly base: BankColumns | LazyColumns;
  private readonly baseSlots: number;
  /** How many terms the cache held (vocab grows past them as records are folded). */
  private readonly baseTerms: number;
  private readonly laterIds: string[] = [];
  /** Postings of slots added after the base, by term id. */
  private readonly laterPostings = new Map<number, number[]>();
  /** Slots of cases added after the base, by id (the latest slot of each id). */
  private readonly laterIndex = new Map<string, number>();
  private vocabIndex: Map<string, number> | undefined;

  /** A bank continuing from decoded columns (a replay cache), which it then owns; they are checked. */
  constructor(from: BankColumns | LazyColumns = emptyColumns()) {
    checkColumns(from);
    this.base = from;
    this.baseSlots = from.idStarts.length;
    this.vocab = from.vocab;
    this.baseTerms = from.vocab.length;
    // Every cached slot is live: only those removed since are kept (a bank of 1M slots allocates nothing here).
    this.alive = u8({ length: this.baseSlots, every: 1 });
    this.reward = f64(from.reward);
    this.created = f64(from.created);
    this.success = u8(from.success);
    this.reused = f64(from.reused);
    this.termCount = u32(from.termCount);
    this.recOffset = f64(from.recOffset);
    this.recLength = u32(from.recLength);
    this.recLine = u32(from.recLine);
    this.liveCount = this.baseSlots;
    this.liveRecordBytes = from.liveRecordBytes;
  }

  get slots(): number {
    return this.alive.length;
  }

  /** The columns this bank was decoded from (its first `cachedSlots` slots), for the stepwise encoder (steps.ts). */
  get cache(): BankColumns | LazyColumns {
    return this.base;
  }

  get cachedSlots(): number {
    return this.baseSlots;
  }

  /** The slots folded since the cache that have term `id` (live or dead), in slot order. */
  laterPostingsOf(id: number): readonly number[] {
    return this.laterPostings.get(id) ?? [];
  }

  idOf(slot: number): string {
    if (slot >= this.baseSlots) return this.laterIds[slot - this.baseSlots]!;
    const { idStarts, idBytes } = this.base;
    const at = (i: number) => (ArrayBuffer.isView(idStarts) ? idStarts[i]! : idStarts.get(i));
    const end = slot + 1 < this.baseSlots ? at(slot + 1) - 1 : idBytes.length;
    return utf8().decode(idBytes.slice(at(slot), end));
  }

  /** The live slot of a case id. */
  slotOf(id: string): number | undefined {
    const later = this.laterIndex.get(id);
    const slot = later ?? this.baseSlotOf(id);
    return slot !== undefined && this.alive.get(slot) ? slot : undefined;
  }

  /** Whether the bank has held a case of this id, live or deleted since (until a compaction forgets it). */
  hasHeld(id: string): boolean {
    return this.laterIndex.has(id) || this.baseSlotOf(id) !== undefined;
  }

  // A bank decoded from a cache answers a query or folds the records written after it: each id is found by a
  // search of the cached (hash, slot) pairs (key-search.ts) — a few probes, each a page of the snapshot at most,
  // where a search of every id cost ~1 ms per record at 100k cases, and a map of every id ~100 ms.
  private baseSlotOf(id: string): number | undefined {
    const hashes = this.base.idHash;
    const pairs = ArrayBuffer.isView(hashes) ? { get: (i: number) => hashes[i]! } : hashes;
    const n = hashes.length >> 1;
    if (n === 0) return undefined;
    const h = idHash32(id);
    for (let i = firstAtLeast((i) => pairs.get(2 * i), n, h); i < n && pairs.get(2 * i) === h; i++) {
      const slot = pairs.get(2 * i + 1);
      if (slot < this.baseSlots && this.idOf(slot) === id) return slot;
    }
    return undefined;
  }

  /** The id of a term, if any case ever had it. */
  termIdOf(term: string): number | undefined {
    // A bank loaded from a cache answers one query: a scan is cheaper than building the map.
    if (this.vocabIndex === undefined) {
      const i = this.vocab.indexOf(term);
      return i === -1 ? undefined : i;
    }
    return this.vocabIndex.get(term);
  }

  /**
   * Every slot (live or dead) whose case has term `id`: those from the cache (with each one's packMeta), then
   * those folded since.
   */
  postingsOf(id: number): { readonly cached: Uint32Array; readonly cachedMeta: Uint16Array; readonly later: readonly number[] } {
    const { postStart, postSlots, postMeta } = this.base;
    if (id + 1 >= postStart.length) return { cached: NO_SLOTS, cachedMeta: NO_META, later: this.laterPostings.get(id) ?? [] };
    const from = postStart[id]!,
      to = postStart[id + 1]!;
    const cached = ArrayBuffer.isView(postSlots) ? postSlots.subarray(from, to) : postSlots.slice(from, to);
    const cachedMeta = ArrayBuffer.isView(postMeta) ? postMeta.subarray(from, to) : postMeta.slice(from, to);
    return { cached, cachedMeta, later: this.laterPostings.get(id) ?? [] };
  }

  /** The packMeta of a slot, from its columns. */
  metaOf(slot: number): number {
    return packMeta(this.reward.get(slot), this.termCount.get(slot), this.success.get(slot) === 1);
  }

  private internTerm(term: string): number {
    // A plain loop: a bank decoded from a cache folds the few records written since it in a process whose code
    // is cold, where a callback a term (vocab.map) ran interpreted, ~1 µs each (~3 ms over 3,000 terms at 1M).
    if (this.vocabIndex === undefined) {
      const index = new Map<string, number>();
      const vocab = this.vocab;
      for (let i = 0; i < vocab.length; i++) index.set(vocab[i]!, i);
      this.vocabIndex = index;
    }
    let id = this.vocabIndex.get(term);
    if (id === undefined) {
      id = this.vocab.length;
      this.vocab.push(term);
      this.vocabIndex.set(term, id);
    }
    return id;
  }

  /** Adds (or replaces) a case with these facts and terms, its record at `at`; answers its slot. */
  add(fields: BankFacts, terms: ReadonlySet<string>, at: LinePosition): number {
    this.remove(fields.id);
    const slot = this.slots;
    this.laterIds.push(fields.id);
    this.alive.push(1);
    this.reward.push(fields.reward);
    this.created.push(fields.created);
    this.success.push(fields.success ? 1 : 0);
    this.reused.push(fields.reused);
    this.termCount.push(terms.size);
    for (const term of fields.marks === undefined ? terms : [...terms, ...fields.marks]) {
      const id = this.internTerm(term);
      const list = this.laterPostings.get(id);
      if (list === undefined) this.laterPostings.set(id, [slot]);
      else list.push(slot);
    }
    this.recOffset.push(at.offset);
    this.recLength.push(at.length);
    this.recLine.push(at.line);
    this.laterIndex.set(fields.id, slot);
    this.liveCount += 1;
    this.liveRecordBytes += at.length + 1;
    return slot;
  }

  /** Removes the live case of `id`; answers the slot it had. */
  remove(id: string): number | undefined {
    const slot = this.slotOf(id);
    if (slot === undefined) return undefined;
    this.alive.set(slot, 0);
    this.liveCount -= 1;
    this.liveRecordBytes -= this.recLength.get(slot) + 1;
    return slot;
  }

  setReused(id: string, count: number): void {
    const slot = this.slotOf(id);
    if (slot !== undefined) this.reused.set(slot, count);
  }

  /** Live slots in the order their cases were (last) written. */
  liveSlots(): number[] {
    const slots: number[] = [];
    for (let s = 0; s < this.slots; s++) if (this.alive.get(s)) slots.push(s);
    return slots;
  }

  position(slot: number): LinePosition {
    return { line: this.recLine.get(slot), offset: this.recOffset.get(slot), length: this.recLength.get(slot) };
  }

  /**
   * What this bank holds beyond the cache it was decoded from: the slots folded since, with their postings
   * and the terms met since, and the cached slots removed or re-counted since. undefined when its cache's
   * slots cannot tell their changes (columns held whole, which only an empty cache or a test gives).
   */
  changes(): BankChanges | undefined {
    const killed = this.alive.overlaid();
    const reused = this.reused.overlaid();
    if (killed === undefined || reused === undefined) return undefined;
    const later = (name: PerSlot) => Array.from({ length: this.slots - this.baseSlots }, (_, i) => this[name].get(this.baseSlots + i));
    return {
      cachedSlots: this.baseSlots,
      cachedTerms: this.baseTerms,
      ids: [...this.laterIds],
      terms: this.vocab.slice(this.baseTerms),
      ...(Object.fromEntries(PER_SLOT.map((name) => [name, later(name)])) as Record<PerSlot, number[]>),
      postings: [...this.laterPostings],
      killed: [...killed].filter(([, alive]) => alive === 0).map(([slot]) => slot),
      reusedCached: [...reused],
      liveCount: this.liveCount,
      liveRecordBytes: this.liveRecordBytes,
    };
  }

  /** Continues a bank just decoded from its cache with `changes` (checked by the caller against this bank). */
  applyChanges(changes: BankChanges): void {
    this.vocab.push(...changes.terms);
    changes.ids.forEach((id, i) => {
      this.laterIds.push(id);
      this.laterIndex.set(id, this.baseSlots + i);
      for (const name of PER_SLOT) this[name].push(changes[name][i]!);
    });
    for (const [term, slots] of changes.postings) this.laterPostings.set(term, [...slots]);
    for (const slot of changes.killed) this.alive.set(slot, 0);
    for (const [slot, count] of changes.reusedCached) this.reused.set(slot, count);
    this.liveCount = changes.liveCount;
    this.liveRecordBytes = changes.liveRecordBytes;
  }
}

/** The columns with a value per slot, as a bank's changes name them. */
const PER_SLOT = ['alive', 'reward', 'created', 'success', 'reused', 'termCount', 'recOffset', 'recLength', 'recLine'] as const;
type PerSlot = (typeof PER_SLOT)[number];
const NO_SLOTS = new Uint32Array(0);
const NO_META = new Uint16Array(0);

/** FNV-1a over the id's UTF-16 units: the bank's id lookup key (collisions are checked against the id). */
export function idHash32(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The (hash of the id, slot) pairs of slots 0… holding `ids`, sorted by hash: a bank's idHash column. */
export function hashIds(ids: readonly string[]): Uint32Array {
  const byHash = new BigUint64Array(ids.length);
  ids.forEach((id, i) => {
    byHash[i] = (BigInt(idHash32(id)) << 32n) | BigInt(i);
  });
  byHash.sort();
  const idHash = new Uint32Array(ids.length * 2);
  byHash.forEach((pair, i) => {
    idHash[2 * i] = Number(pair >> 32n);
    idHash[2 * i + 1] = Number(pair & 0xffffffffn);
  });
  return idHash;
}
// Made on first use: a session command loads this module too, and TextDecoder compiles Node's encoding code.
let decoder: InstanceType<typeof TextDecoder> | undefined;
const utf8 = () => (decoder ??= new TextDecoder());
