// The bank's slots ordered by created (issue 47), so that a page sorted by created — newest or oldest first — reads
// the slots it shows, not the whole column. A snapshot keeps them (its byCreated section: the slots by created,
// ties by slot), and its head says whether created never decreases over its slots (then the order is the slots'
// own, and nothing of byCreated need be read). A bank decoded from it merges that order with the live slots folded
// since (the delta, sorted in memory). A list keeps ties newest first: the higher slot first, either way.
import type { Bank } from './bank';
import { type Frame, sliceOf, type StepCursor } from './step-writers';
import type { StepSink } from './step-sink';

/**
 * The snapshot's word and the live slots folded since: false when the snapshot does not tell (an older crux's) or
 * says no, though removals since may have made it so (a caller then sorts the column, as it would anyway).
 */
function createdOrdered(bank: Bank): boolean {
  if (!(bank.cache.createdOrdered ?? bank.cachedSlots === 0)) return false;
  let last = Number.NEGATIVE_INFINITY;
  for (let s = bank.cachedSlots - 1; s >= 0; s--) {
    if (bank.alive.get(s) !== 1) continue;
    last = bank.created.get(s);
    break;
  }
  for (let s = bank.cachedSlots; s < bank.slots; s++) {
    if (bank.alive.get(s) !== 1) continue;
    const created = bank.created.get(s);
    if (!(created >= last)) return false;
    last = created;
  }
  return true;
}

/** Exactly whether created never decreases over the live slots (a snapshot's head): createdOrdered, else a look at each. */
export function liveCreatedOrdered(bank: Bank): boolean {
  if (createdOrdered(bank)) return true;
  const created = bank.created.range(0, bank.slots);
  const alive = bank.alive.range(0, bank.slots);
  let last = Number.NEGATIVE_INFINITY;
  for (let s = 0; s < created.length; s++) {
    if (alive[s] !== 1) continue;
    if (!(created[s]! >= last)) return false;
    last = created[s]!;
  }
  return true;
}

type At = (i: number) => number;

/**
 * The cached slots by created, ties by slot: the i-th, as the snapshot keeps them (every cached slot, live or
 * removed since); undefined when the cache does not hold the order (columns made in memory) and `sort` is not asked.
 */
function cachedOrder(bank: Bank, sort: boolean): At | undefined {
  const cache = bank.cache;
  if (cache.createdOrdered === true || bank.cachedSlots === 0) return (i) => i;
  const order = cache.byCreated;
  if (order !== undefined) return ArrayBuffer.isView(order) ? (i) => order[i]! : (i) => order.get(i);
  if (!sort) return undefined;
  const sorted = Uint32Array.from({ length: bank.cachedSlots }, (_, i) => i).sort((x, y) => bank.created.get(x) - bank.created.get(y) || x - y);
  return (i) => sorted[i]!;
}

/**
 * The live slots by created, ties the higher slot first: `slots(descending)` from the most or the least — each read
 * as the page needs it (a few pages of the snapshot's byCreated and created, and the delta, read once); undefined
 * when the bank cannot tell its order without sorting (the caller sorts).
 */
export function createdOrder(bank: Bank): { slots(descending: boolean): Iterator<number> } | undefined {
  const at = cachedOrder(bank, false);
  if (at === undefined) return undefined;
  const base = bank.cachedSlots;
  const laterCreated = Float64Array.from({ length: bank.slots - base }, (_, i) => bank.created.get(base + i));
  const live: number[] = [];
  for (let s = base; s < bank.slots; s++) if (bank.alive.get(s) === 1) live.push(s);
  const key = (s: number) => (s >= base ? laterCreated[s - base]! : bank.created.get(s));
  return {
    slots(descending) {
      const sign = descending ? -1 : 1;
      const later = live.toSorted((x, y) => sign * (key(x) - key(y)) || y - x);
      const before = (x: number, y: number) => {
        const d = sign * (key(x) - key(y));
        return d < 0 || (d === 0 && x > y);
      };
      return merged(descending ? cachedDescending(bank, at) : cachedAscending(bank, at), later, before);
    },
  };
}

/** The cached live slots from the last of the order: created descending, ties the higher slot first. */
function* cachedDescending(bank: Bank, at: At): Generator<number> {
  for (let i = bank.cachedSlots - 1; i >= 0; i--) {
    const s = at(i);
    if (bank.alive.get(s) === 1) yield s;
  }
}

/**
 * The cached live slots from the first of the order, each run of one created from its end (ties the higher slot
 * first): the run's end found by a galloping search, so that a run of many ties costs what of it is shown.
 */
function* cachedAscending(bank: Bank, at: At): Generator<number> {
  const n = bank.cachedSlots;
  const key = (i: number) => bank.created.get(at(i));
  for (let i = 0; i < n; ) {
    const k = key(i);
    let step = 1;
    while (i + step < n && key(i + step) === k) step *= 2;
    // key(i + step / 2) is k (or step is 1); the run ends in (i + step / 2, min(i + step, n)].
    let lo = i + (step >> 1) + 1;
    let hi = Math.min(i + step, n);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (key(mid) === k) lo = mid + 1;
      else hi = mid;
    }
    for (let j = lo - 1; j >= i; j--) {
      const s = at(j);
      if (bank.alive.get(s) === 1) yield s;
    }
    i = lo;
  }
}

/** Two orders of slots merged by `before`. */
function* merged(a: Iterator<number>, b: readonly number[], before: (x: number, y: number) => boolean): Generator<number> {
  let x = a.next();
  let j = 0;
  while (!x.done || j < b.length) {
    if (j < b.length && (x.done === true || before(b[j]!, x.value))) yield b[j++]!;
    else {
      yield x.value as number;
      x = a.next();
    }
  }
}

/**
 * The snapshot's byCreated section (renumbered slots by created, ties by slot), a slice at a time: the slots' own
 * order where created never decreases over them (`ordered`), else the cached order (dead slots dropped) merged with
 * the live slots folded since.
 */
export function writeByCreated(frame: Frame, c: StepCursor, sink: StepSink, ordered: boolean): boolean {
  if (ordered) {
    while (c.pos < frame.live && !sink.full) sink.u32(c.pos++);
    return c.pos >= frame.live;
  }
  const bank = frame.bank;
  const at = cachedOrder(bank, true)!;
  const order = bank.cache.createdOrdered === true ? undefined : bank.cache.byCreated;
  const key = (s: number) => bank.created.get(s);
  const later: number[] = [];
  for (let s = frame.base; s < frame.slots; s++) if (frame.slotOf(s) >= 0) later.push(s);
  later.sort((x, y) => key(x) - key(y) || x - y);
  const takeLater = (k: number) => {
    while (c.sub < later.length && key(later[c.sub]!) < k) sink.u32(frame.slotOf(later[c.sub++]!));
  };
  while (c.pos < frame.base && !sink.full) {
    const end = Math.min(frame.base, c.pos + frame.batch);
    const slots = order === undefined ? undefined : sliceOf(order, c.pos, end);
    sink.read((end - c.pos) * 4);
    for (let i = c.pos; i < end; i++) {
      const slot = slots === undefined ? at(i) : slots[i - c.pos]!;
      const n = frame.slotOf(slot);
      if (n < 0) continue;
      if (c.sub < later.length) takeLater(key(slot));
      sink.u32(n);
    }
    c.pos = end;
  }
  if (c.pos < frame.base) return false;
  takeLater(Number.POSITIVE_INFINITY);
  return true;
}

const keyCell = new Float64Array(1);
const keyWords = new Uint32Array(keyCell.buffer);
/** A time as two unsigned words that sort as it does (a streamed build's scratch sort: stream.ts); -0 as 0. */
export function createdSortKey(created: number): [hi: number, lo: number] {
  keyCell[0] = created === 0 ? 0 : created;
  const [lo, hi] = [keyWords[0]!, keyWords[1]!];
  return hi >= 0x80000000 ? [~hi >>> 0, ~lo >>> 0] : [(hi | 0x80000000) >>> 0, lo];
}
