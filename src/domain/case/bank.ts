// The case bank: the folded state of cases.jsonl, in columns (one slot per case version) with an inverted
// index (term → slots), so that it is compact, fast to rank over, and serializable for a replay cache.
// A case's text fields stay where they were written: in memory when this process replayed the record,
// else at the record's journal position (see `position`).
import { unhandledEvent } from '../../journal/store-spec';
import type { LinePosition } from '../../journal/scan';
import type { JournalRecord } from '../../journal/record';
import { scrubText } from '../../shared/scrub';
import { formatTime } from '../../shared/time';
import type { CaseId } from '../../shared/ids';
import type { Case } from './case';
import { f64, u32, u8, type Column, type Numbers } from './columns';
import { parseCaseEvent } from './events';
import { caseTerms } from './tokenize';

/** A recorded/imported payload as it sits in the journal (validated when it is folded). */
export type CaseBody = Record<string, unknown>;

/** A bank as a replay cache stores it: every slot live, strings joined by "\n", postings in CSR form. */
export interface BankColumns {
  /** Case ids, UTF-8, joined by "\n"; slot s's id starts at byte idStarts[s]. Decoded one at a time, on demand. */
  readonly idBytes: Uint8Array;
  readonly idStarts: Uint32Array;
  readonly vocab: string[];
  readonly reward: Float64Array;
  readonly created: Float64Array;
  readonly success: Uint8Array;
  readonly reused: Float64Array;
  readonly termCount: Uint32Array;
  readonly recOffset: Float64Array;
  readonly recLength: Uint32Array;
  readonly recLine: Uint32Array;
  /** Slots of term t: postSlots[postStart[t] .. postStart[t + 1]). */
  readonly postStart: Uint32Array;
  readonly postSlots: Uint32Array;
  /** Beside each posting, what ranking asks of its slot first (packMeta): most candidates need no column read. */
  readonly postMeta: Uint16Array;
  /** (hash of the id, slot) pairs sorted by hash: a decoded bank finds a case id in O(log n). */
  readonly idHash: Uint32Array;
  readonly liveRecordBytes: number;
}

/**
 * The same columns read on demand from a snapshot's verified pages (bank-codec.ts): a query reads the
 * postings of its terms and the numbers of its candidates, not the whole bank.
 */
export interface LazyColumns {
  readonly idBytes: Bytes;
  readonly idStarts: Numbers;
  readonly vocab: string[];
  readonly reward: Numbers;
  readonly created: Numbers;
  readonly success: Numbers;
  readonly reused: Numbers;
  readonly termCount: Numbers;
  readonly recOffset: Numbers;
  readonly recLength: Numbers;
  readonly recLine: Numbers;
  readonly postStart: Uint32Array;
  readonly postSlots: Numbers & { slice(from: number, to: number): Uint32Array };
  readonly postMeta: Numbers & { slice(from: number, to: number): Uint16Array };
  readonly idHash: Numbers;
  readonly liveRecordBytes: number;
}

/** Bytes read on demand. */
export interface Bytes {
  readonly length: number;
  slice(from: number, to: number): Uint8Array;
}

const emptyColumns = (): BankColumns => ({
  idBytes: new Uint8Array(0), idStarts: new Uint32Array(0), vocab: [], reward: new Float64Array(0), created: new Float64Array(0),
  success: new Uint8Array(0), reused: new Float64Array(0), termCount: new Uint32Array(0), recOffset: new Float64Array(0),
  recLength: new Uint32Array(0), recLine: new Uint32Array(0), postStart: new Uint32Array(1), postSlots: new Uint32Array(0), postMeta: new Uint16Array(0), idHash: new Uint32Array(0), liveRecordBytes: 0,
});

export class CaseBank {
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
  /** Bodies of records this process read; a slot without one is read at its position. */
  readonly bodies = new Map<number, CaseBody>();
  liveCount = 0;
  liveRecordBytes = 0;
  private readonly base: BankColumns | LazyColumns;
  private readonly baseSlots: number;
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
    this.alive = u8(new Uint8Array(this.baseSlots).fill(1));
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

  idOf(slot: number): string {
    if (slot >= this.baseSlots) return this.laterIds[slot - this.baseSlots]!;
    const { idStarts, idBytes } = this.base;
    const at = (i: number) => (ArrayBuffer.isView(idStarts) ? idStarts[i]! : idStarts.get(i));
    const end = slot + 1 < this.baseSlots ? at(slot + 1) - 1 : idBytes.length;
    return UTF8.decode(idBytes.slice(at(slot), end));
  }

  /** The live slot of a case id. */
  slotOf(id: string): number | undefined {
    const later = this.laterIndex.get(id);
    const slot = later ?? this.baseSlotOf(id);
    return slot !== undefined && this.alive.get(slot) ? slot : undefined;
  }

  // A bank decoded from a cache answers a query or folds the records written after it: each id is found by a
  // binary search of the cached (hash, slot) pairs — a few probes, where a search of every id cost ~1 ms per
  // record at 100k cases, and a map of every id ~100 ms.
  private baseSlotOf(id: string): number | undefined {
    const hashes = this.base.idHash;
    const pairs = ArrayBuffer.isView(hashes) ? { get: (i: number) => hashes[i]! } : hashes;
    const n = hashes.length >> 1;
    if (n === 0) return undefined;
    const h = idHash32(id);
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs.get(2 * mid) < h) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < n && pairs.get(2 * i) === h; i++) {
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
    const from = postStart[id]!, to = postStart[id + 1]!;
    const cached = ArrayBuffer.isView(postSlots) ? postSlots.subarray(from, to) : postSlots.slice(from, to);
    const cachedMeta = ArrayBuffer.isView(postMeta) ? postMeta.subarray(from, to) : postMeta.slice(from, to);
    return { cached, cachedMeta, later: this.laterPostings.get(id) ?? [] };
  }

  /** The packMeta of a slot, from its columns. */
  metaOf(slot: number): number {
    return packMeta(this.reward.get(slot), this.termCount.get(slot), this.success.get(slot) === 1);
  }

  private internTerm(term: string): number {
    if (this.vocabIndex === undefined) this.vocabIndex = new Map(this.vocab.map((t, i) => [t, i]));
    let id = this.vocabIndex.get(term);
    if (id === undefined) {
      id = this.vocab.length;
      this.vocab.push(term);
      this.vocabIndex.set(term, id);
    }
    return id;
  }

  /** Adds (or replaces) a case from a recorded/imported payload; a malformed payload is skipped. */
  put(body: CaseBody, at: LinePosition): void {
    const fields = foldable(body);
    if (fields === undefined) return;
    this.remove(fields.id);
    const slot = this.slots;
    this.laterIds.push(fields.id);
    this.alive.push(1);
    this.reward.push(fields.reward);
    this.created.push(fields.created);
    this.success.push(fields.success ? 1 : 0);
    this.reused.push(fields.reused);
    const terms = caseTerms(fields.task, fields.tags);
    this.termCount.push(terms.size);
    for (const term of terms) {
      const id = this.internTerm(term);
      const list = this.laterPostings.get(id);
      if (list === undefined) this.laterPostings.set(id, [slot]);
      else list.push(slot);
    }
    this.recOffset.push(at.offset);
    this.recLength.push(at.length);
    this.recLine.push(at.line);
    this.bodies.set(slot, body);
    this.laterIndex.set(fields.id, slot);
    this.liveCount += 1;
    this.liveRecordBytes += at.length + 1;
  }

  remove(id: string): void {
    const slot = this.slotOf(id);
    if (slot === undefined) return;
    this.alive.set(slot, 0);
    this.bodies.delete(slot);
    this.liveCount -= 1;
    this.liveRecordBytes -= this.recLength.get(slot) + 1;
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

  /** The live state as columns, dead slots dropped and the rest renumbered in order. */
  toColumns(): BankColumns {
    const live = this.liveSlots();
    const renumber = new Int32Array(this.slots).fill(-1);
    live.forEach((s, i) => (renumber[s] = i));
    const pick = <T extends Float64Array | Uint32Array | Uint8Array>(column: Column<T>, make: (n: number) => T): T => {
      const out = make(live.length);
      live.forEach((s, i) => (out[i] = column.get(s)));
      return out;
    };
    const idStarts = new Uint32Array(live.length);
    const ids: string[] = [];
    let at = 0;
    live.forEach((s, i) => {
      const id = this.idOf(s);
      idStarts[i] = at;
      ids.push(id);
      at += UTF8_ENCODER.encode(id).length + 1;
    });
    const postStart = new Uint32Array(this.vocab.length + 1);
    const postSlots: number[] = [];
    const postMeta: number[] = [];
    const post = (slot: number) => {
      if (renumber[slot]! < 0) return;
      postSlots.push(renumber[slot]!);
      postMeta.push(this.metaOf(slot));
    };
    for (let t = 0; t < this.vocab.length; t++) {
      postStart[t] = postSlots.length;
      const { cached, later } = this.postingsOf(t);
      for (const slot of cached) post(slot);
      for (const slot of later) post(slot);
    }
    postStart[this.vocab.length] = postSlots.length;
    const byHash = new BigUint64Array(ids.length);
    ids.forEach((id, i) => (byHash[i] = (BigInt(idHash32(id)) << 32n) | BigInt(i)));
    byHash.sort();
    const idHash = new Uint32Array(ids.length * 2);
    byHash.forEach((pair, i) => {
      idHash[2 * i] = Number(pair >> 32n);
      idHash[2 * i + 1] = Number(pair & 0xffffffffn);
    });
    return {
      idBytes: UTF8_ENCODER.encode(ids.join('\n')), idStarts, vocab: [...this.vocab],
      reward: pick(this.reward, (n) => new Float64Array(n)),
      created: pick(this.created, (n) => new Float64Array(n)),
      success: pick(this.success, (n) => new Uint8Array(n)),
      reused: pick(this.reused, (n) => new Float64Array(n)),
      termCount: pick(this.termCount, (n) => new Uint32Array(n)),
      recOffset: pick(this.recOffset, (n) => new Float64Array(n)),
      recLength: pick(this.recLength, (n) => new Uint32Array(n)),
      recLine: pick(this.recLine, (n) => new Uint32Array(n)),
      postStart, postSlots: Uint32Array.from(postSlots), postMeta: Uint16Array.from(postMeta), idHash, liveRecordBytes: this.liveRecordBytes,
    };
  }
}

const NO_SLOTS = new Uint32Array(0);
const NO_META = new Uint16Array(0);

/** The largest term count a meta holds exactly; at it, the termCount column has the true count. */
export const META_TERMS_MAX = 127;
/**
 * A slot's ranking facts in 16 bits: bit 15 success, bits 8–14 its term count (saturating at META_TERMS_MAX),
 * bits 0–7 its reward quantized downwards (floor(reward × 255)), so that a smaller quantum is a strictly
 * smaller reward: a candidate can lose on it without its exact reward being read.
 */
const packMeta = (reward: number, termCount: number, success: boolean): number =>
  ((success ? 0x8000 : 0) | (Math.min(termCount, META_TERMS_MAX) << 8) | Math.max(0, Math.min(255, Math.floor(reward * 255)))) >>> 0;
export const metaTerms = (meta: number): number => (meta >>> 8) & 0x7f;
export const metaSuccess = (meta: number): boolean => (meta & 0x8000) !== 0;
export const metaReward = (meta: number): number => meta & 0xff;

/** FNV-1a over the id's UTF-16 units: the bank's id lookup key (collisions are checked against the id). */
function idHash32(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
const UTF8 = new TextDecoder();
const UTF8_ENCODER = new TextEncoder();

/**
 * Refuses columns whose shapes disagree (a damaged or foreign cache). Postings are not visited one by one
 * (that would cost a replay's worth of time): a slot number out of range reads as undefined and is skipped.
 */
function checkColumns(c: BankColumns | LazyColumns): void {
  const n = c.idStarts.length;
  const perSlot = [c.reward, c.created, c.success, c.reused, c.termCount, c.recOffset, c.recLength, c.recLine];
  if (perSlot.some((column) => column.length !== n)) throw new RangeError('inconsistent columns');
  if (c.postStart.length !== c.vocab.length + 1 || c.postStart[c.vocab.length] !== c.postSlots.length || c.postMeta.length !== c.postSlots.length) {
    throw new RangeError('inconsistent postings');
  }
  for (let t = 0; t < c.vocab.length; t++) if (c.postStart[t]! > c.postStart[t + 1]!) throw new RangeError('inconsistent postings');
  // Columns read on demand come from checksummed pages: visiting every id would read them all.
  if (ArrayBuffer.isView(c.idStarts)) {
    const ids = c.idStarts;
    for (let s = 1; s < n; s++) if (ids[s]! <= ids[s - 1]!) throw new RangeError('inconsistent ids');
    if (n > 0 && ids[n - 1]! >= c.idBytes.length) throw new RangeError('inconsistent ids');
  }
  if (c.idHash.length !== 2 * n) throw new RangeError('inconsistent id hashes');
}

interface Foldable {
  id: string;
  task: string;
  tags: string[];
  reward: number;
  created: number;
  success: boolean;
  reused: number;
}

/** Whether a recorded or imported payload is a case the bank can fold. */
export const isFoldableCase = (body: CaseBody): boolean => foldable(body) !== undefined;

function foldable(body: unknown): Foldable | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as CaseBody;
  const { case_id, task, reward, created_at, success, times_reused } = b;
  if (typeof case_id !== 'string' || case_id === '' || case_id.includes('\n')) return undefined;
  if (typeof task !== 'string' || typeof b.action !== 'string' || typeof b.outcome !== 'string') return undefined;
  if (typeof reward !== 'number' || !(reward >= 0 && reward <= 1)) return undefined;
  const created = typeof created_at === 'string' ? Date.parse(created_at) : NaN;
  if (Number.isNaN(created) || typeof success !== 'boolean') return undefined;
  const reused = Number.isSafeInteger(times_reused) && (times_reused as number) >= 0 ? (times_reused as number) : 0;
  return { id: case_id, task, tags: stringTags(b.tags), reward, created, success, reused };
}

const stringTags = (tags: unknown): string[] => (Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : []);
const optionalText = (value: unknown) => (typeof value === 'string' ? scrubText(value) : null);

/** A stored payload as the case it describes; text is scrubbed again on the way out (SPEC §7). */
export function toCase(body: CaseBody, timesReused: number): Case {
  return {
    case_id: body.case_id as CaseId,
    task: scrubText(body.task as string),
    context: optionalText(body.context),
    action: scrubText(body.action as string),
    outcome: scrubText(body.outcome as string),
    success: body.success as boolean,
    reward: body.reward as number,
    tags: stringTags(body.tags).map(scrubText),
    source_receipt: optionalText(body.source_receipt),
    created_at: formatTime(Date.parse(body.created_at as string)),
    times_reused: timesReused,
  };
}

/** Folds one record into the bank. Never throws: a payload that does not parse is skipped (reads report it). */
export function evolveBank(bank: CaseBank, record: JournalRecord, at: LinePosition): void {
  const event = parseCaseEvent(record);
  if (typeof event === 'string') return;
  switch (event.ev) {
    case 'case.recorded':
    case 'case.imported':
      bank.put(event.data as unknown as CaseBody, at); // the bank reads the stored fields as they are
      return;
    case 'case.reused':
      bank.setReused(event.data.case_id, event.data.times_reused);
      return;
    case 'case.deleted':
      bank.remove(event.data.case_id);
      return;
    default:
      unhandledEvent(event);
  }
}
