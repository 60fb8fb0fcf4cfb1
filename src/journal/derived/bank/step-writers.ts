// The sections of the stepwise bank encoding (steps.ts) that are written a slice at a time: the ids and where
// each starts, the per-slot columns, the postings and their ranking facts, the sorted id hashes; and the Frame that
// every step derives from the bank alike (which slots live, and each one's number in the new encoding).
import { idHash32, type Bank } from './bank';
import type { LazyColumns } from './layout';
import type { Column, Typed } from './columns';
import type { StepSink } from './step-sink';
import type { TagTally } from './layout';

/** Elements read per slice of a column or of a term's postings, at most (and an eighth of the budget's bytes). */
const BATCH_MAX = 8192;

export interface StepCursor {
  /** -1 while the live postings of each term are counted (only when cached slots were removed), else an index of SECTIONS. */
  section: number;
  /** A slot, a term or an id-hash pair, by section; `sub`: a place in that term's postings, or in the new id-hash pairs. */
  pos: number;
  sub: number;
  /** A running value: the next id's byte offset (idStarts), the postings so far (postStart), whether an id was written (ids). */
  at: number;
  /** Body bytes written before this step, and where the current section began. */
  off: number;
  start: number;
  counts: number[];
  /** Byte lengths of the sections after the head (ids, vocab, then NUMERIC's), once the counts are known. */
  lengths: number[] | undefined;
  /** The head's success by tag (tag-tally.ts), computed with the lengths. */
  tally?: TagTally | undefined;
  /** The head's word on created's order (key-order.ts), computed with the lengths. */
  ordered?: boolean | undefined;
}

/** Slots as the new encoding numbers them: dead ones dropped, the rest in order. Derived alike by every step. */
export class Frame {
  readonly base: number;
  readonly slots: number;
  readonly live: number;
  readonly vocab: number;
  /** Elements a slice reads: a step stops past its budget by one slice at most. */
  readonly batch: number;
  /** killedBefore[s]: cached slots before s that were removed (absent when none was). */
  private readonly killedBefore: Uint32Array | undefined;
  private readonly laterSlot: Int32Array;

  constructor(
    readonly bank: Bank,
    readonly killed: readonly number[],
    budget: number,
  ) {
    this.batch = Math.max(16, Math.min(BATCH_MAX, Math.floor(budget / 8)));
    this.base = bank.cachedSlots;
    this.slots = bank.slots;
    this.vocab = bank.vocab.length;
    if (killed.length > 0) {
      const kb = new Uint32Array(this.base + 1);
      let k = 0;
      for (let s = 0; s < this.base; s++) {
        kb[s] = k;
        if (killed[k] === s) k++;
      }
      kb[this.base] = k;
      this.killedBefore = kb;
    }
    this.laterSlot = new Int32Array(this.slots - this.base);
    let next = this.base - killed.length;
    for (let s = this.base; s < this.slots; s++) this.laterSlot[s - this.base] = bank.alive.get(s) === 1 ? next++ : -1;
    this.live = next;
  }

  /** The new number of slot `s`, or -1 when it is dead (or no slot of this bank). */
  slotOf(s: number): number {
    if (s < this.base) {
      const kb = this.killedBefore;
      if (kb === undefined) return s;
      return kb[s + 1] !== kb[s] ? -1 : s - kb[s]!;
    }
    return s < this.slots ? this.laterSlot[s - this.base]! : -1;
  }

  /** Term `t`'s postings in the cache: [from, to) of postSlots. */
  cachedRange(t: number): [number, number] {
    const ps = this.bank.cache.postStart;
    return t + 1 < ps.length ? [ps[t]!, ps[t + 1]!] : [0, 0];
  }
}

export const sliceOf = (column: unknown, from: number, to: number): ArrayLike<number> =>
  ArrayBuffer.isView(column) ? (column as Uint32Array).subarray(from, to) : (column as { slice(a: number, b: number): ArrayLike<number> }).slice(from, to);
export const numberAt = (column: LazyColumns['idStarts'] | Uint32Array, i: number): number => (ArrayBuffer.isView(column) ? column[i]! : column.get(i));

/** Live slots' ids joined by "\n", or (`starts`) where each one starts in them: a run of slots at a time (one slice of the cached bytes per run). */
export function writeIds(frame: Frame, c: StepCursor, sink: StepSink, starts: boolean): boolean {
  const { idStarts, idBytes } = frame.bank.cache;
  // c.at: the next id's offset (starts), or whether an id was written (ids).
  const put = (id: Uint8Array | string, length: number) => {
    if (starts) {
      sink.u32(c.at);
      c.at += length + 1;
      return;
    }
    if (c.at === 1) sink.u8(10);
    if (typeof id === 'string') sink.text(id);
    else sink.bytes(id);
    c.at = 1;
  };
  while (c.pos < frame.slots && !sink.full) {
    if (c.pos >= frame.base) {
      const id = frame.slotOf(c.pos) >= 0 ? frame.bank.idOf(c.pos) : undefined;
      if (id !== undefined) put(id, Buffer.byteLength(id));
      c.pos += 1;
      continue;
    }
    const end = Math.min(frame.base, c.pos + frame.batch);
    const run = sliceOf(idStarts, c.pos, Math.min(end + 1, frame.base));
    const from = run[0]!;
    const bytes = starts ? undefined : idBytes.slice(from, end < frame.base ? run[end - c.pos]! : idBytes.length);
    sink.read(run.length * 4 + (bytes?.length ?? 0));
    for (let s = c.pos; s < end; s++) {
      if (frame.slotOf(s) < 0) continue;
      const idStart = run[s - c.pos]!;
      const idEnd = s + 1 < frame.base ? run[s + 1 - c.pos]! - 1 : idBytes.length;
      put(bytes?.subarray(idStart - from, idEnd - from) ?? NONE, idEnd - idStart);
    }
    c.pos = end;
  }
  return c.pos >= frame.slots;
}

const NONE = new Uint8Array(0);

/** A per-slot column's live values, a slice of it at a time. */
export function writeColumn(frame: Frame, c: StepCursor, sink: StepSink, name: string): boolean {
  const column = (frame.bank as unknown as Record<string, Column<Typed>>)[name]!;
  const size = name === 'success' ? 1 : name === 'termCount' || name === 'recLength' || name === 'recLine' ? 4 : 8;
  const put = size === 1 ? sink.u8 : size === 4 ? sink.u32 : sink.f64;
  while (c.pos < frame.slots && !sink.full) {
    const end = Math.min(frame.slots, c.pos + frame.batch);
    const values = column.range(c.pos, end);
    sink.read((end - c.pos) * size);
    for (let s = c.pos; s < end; s++) if (frame.slotOf(s) >= 0) put.call(sink, values[s - c.pos]!);
    c.pos = end;
  }
  return c.pos >= frame.slots;
}

/** Each term's live postings (cached, then folded since), renumbered; or (meta) the ranking facts beside them. */
export function writePostings(frame: Frame, c: StepCursor, sink: StepSink, meta: boolean): boolean {
  const { postSlots, postMeta } = frame.bank.cache;
  while (c.pos < frame.vocab && !sink.full) {
    const [from, to] = frame.cachedRange(c.pos);
    if (c.sub < to - from) {
      const end = Math.min(to - from, c.sub + frame.batch);
      const slots = sliceOf(postSlots, from + c.sub, from + end);
      const metas = meta ? sliceOf(postMeta, from + c.sub, from + end) : undefined;
      sink.read(slots.length * (meta ? 6 : 4));
      for (let i = 0; i < slots.length; i++) {
        const n = slots[i]! < frame.base ? frame.slotOf(slots[i]!) : -1;
        if (n < 0) continue;
        if (metas === undefined) sink.u32(n);
        else sink.u16(metas[i]!);
      }
      c.sub = end;
      continue;
    }
    for (const s of frame.bank.laterPostingsOf(c.pos)) {
      const n = frame.slotOf(s);
      if (n < 0) continue;
      if (meta) sink.u16(frame.bank.metaOf(s));
      else sink.u32(n);
    }
    c.pos += 1;
    c.sub = 0;
  }
  return c.pos >= frame.vocab;
}

/** The (id hash, slot) pairs sorted: the cache's (sorted already, renumbered) merged with those of the live slots folded since. */
export function writeIdHash(frame: Frame, c: StepCursor, sink: StepSink): boolean {
  const hashes = frame.bank.cache.idHash;
  const cachedPairs = hashes.length >> 1;
  const later = laterPairs(frame);
  const takeLater = (h: number, n: number) => {
    while (c.sub < later.length && (later[c.sub]![0] < h || (later[c.sub]![0] === h && later[c.sub]![1] < n))) {
      sink.u32(later[c.sub]![0]);
      sink.u32(later[c.sub]![1]);
      c.sub += 1;
    }
  };
  while (c.pos < cachedPairs && !sink.full) {
    const end = Math.min(cachedPairs, c.pos + frame.batch);
    const pairs = sliceOf(hashes, 2 * c.pos, 2 * end);
    sink.read(pairs.length * 4);
    for (let i = 0; i < end - c.pos; i++) {
      const slot = pairs[2 * i + 1]!;
      const n = slot < frame.base ? frame.slotOf(slot) : -1;
      if (n < 0) continue;
      takeLater(pairs[2 * i]!, n);
      sink.u32(pairs[2 * i]!);
      sink.u32(n);
    }
    c.pos = end;
  }
  if (c.pos < cachedPairs) return false;
  takeLater(Number.POSITIVE_INFINITY, 0);
  return true;
}

/** The live slots folded since the cache as (id hash, new slot), sorted as hashIds sorts them. */
function laterPairs(frame: Frame): [number, number][] {
  const pairs: [number, number][] = [];
  for (let s = frame.base; s < frame.slots; s++) {
    const n = frame.slotOf(s);
    if (n >= 0) pairs.push([idHash32(frame.bank.idOf(s)), n]);
  }
  return pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}
