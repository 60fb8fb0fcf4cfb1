// The bank's slots ordered by each number a list sorts by — created, reward, reused (issue 47) — so that a page
// sorted by one of them, from the most or the least, reads the slots it shows, not the whole column. A snapshot
// keeps each order (its byCreated, byReward and byReused sections: the slots by the number, ties by slot), and its
// head says whether created never decreases over its slots (then that order is the slots' own, and nothing of
// byCreated need be read). A bank decoded from it merges that order with the live slots folded since and the
// cached slots whose number was set since (a reuse count: moved), both sorted in memory. A list keeps ties newest
// first: the higher slot first, either way.
import type { Bank } from './bank';
import type { Numbers } from './columns';
import { type Frame, sliceOf, type StepCursor } from './step-writers';
import type { StepSink } from './step-sink';

/** The numbers a bank keeps its slots in the order of. */
export type OrderKey = 'created' | 'reward' | 'reused';
/** Each order's section of the snapshot (codec.ts NUMERIC). */
const ORDER_SECTION = { created: 'byCreated', reward: 'byReward', reused: 'byReused' } as const;

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

const valueAt = (column: Float64Array | Numbers, i: number): number => (ArrayBuffer.isView(column) ? column[i]! : column.get(i));

/** The number of cached slot `s` as the snapshot holds it (a reuse count set since aside: `moved`). */
const cachedKey = (bank: Bank, key: OrderKey) => {
  const column = bank.cache[key];
  return (s: number) => valueAt(column, s);
};

/**
 * The cached slots by `key`, ties by slot: the i-th, as the snapshot keeps them (every cached slot, live or removed
 * since); undefined when the cache does not hold the order (columns made in memory) and `sort` is not asked.
 */
function cachedOrder(bank: Bank, key: OrderKey, sort: boolean): At | undefined {
  const cache = bank.cache;
  if (bank.cachedSlots === 0 || (key === 'created' && cache.createdOrdered === true)) return (i) => i;
  const order = cache[ORDER_SECTION[key]];
  if (order !== undefined) return ArrayBuffer.isView(order) ? (i) => order[i]! : (i) => order.get(i);
  if (!sort) return undefined;
  const value = cachedKey(bank, key);
  const sorted = Uint32Array.from({ length: bank.cachedSlots }, (_, i) => i).sort((x, y) => value(x) - value(y) || x - y);
  return (i) => sorted[i]!;
}

/**
 * The cached slots whose `key` was set since the snapshot (a reuse count: the others never change), live or not;
 * undefined when the bank cannot tell them (columns held whole, which only a test gives).
 */
function movedSlots(bank: Bank, key: OrderKey): ReadonlySet<number> | undefined {
  if (key !== 'reused' || bank.cachedSlots === 0) return NONE;
  const set = bank.reused.overlaid();
  if (set === undefined) return undefined;
  const moved = new Set<number>();
  for (const slot of set.keys()) if (slot < bank.cachedSlots) moved.add(slot);
  return moved;
}
const NONE: ReadonlySet<number> = new Set();

/** An order of the live slots: `slots(descending)` from the most or the least, ties the higher slot first. */
export interface KeyOrder {
  slots(descending: boolean): Iterator<number>;
}

/**
 * The live slots by `key`, ties the higher slot first — each read as the page needs it (a few pages of the
 * snapshot's order and of the column, and the slots folded or moved since, read once); undefined when the bank
 * cannot tell its order without sorting (the caller sorts).
 */
export function keyOrder(bank: Bank, key: OrderKey): KeyOrder | undefined {
  const at = cachedOrder(bank, key, false);
  const moved = movedSlots(bank, key);
  if (at === undefined || moved === undefined) return undefined;
  const column = bank[key];
  const base = bank.cachedSlots;
  // The slots merged from memory: the live ones folded since, and those moved since.
  const live: number[] = [];
  for (const s of moved) if (bank.alive.get(s) === 1) live.push(s);
  for (let s = base; s < bank.slots; s++) if (bank.alive.get(s) === 1) live.push(s);
  const memo = new Map<number, number>(live.map((s) => [s, column.get(s)]));
  const value = (s: number) => memo.get(s) ?? column.get(s);
  const cached = cachedKey(bank, key);
  return {
    slots(descending) {
      const sign = descending ? -1 : 1;
      const later = live.toSorted((x, y) => sign * (value(x) - value(y)) || y - x);
      const before = (x: number, y: number) => {
        const d = sign * (value(x) - value(y));
        return d < 0 || (d === 0 && x > y);
      };
      const skip = (s: number) => bank.alive.get(s) !== 1 || moved.has(s);
      return merged(
        descending ? cachedDescending(bank.cachedSlots, at, skip) : cachedAscending(bank.cachedSlots, at, (i) => cached(at(i)), skip),
        later,
        before,
      );
    },
  };
}

/** The cached slots from the last of the order (by the number descending, ties the higher slot first), but those skipped. */
function* cachedDescending(n: number, at: At, skip: (s: number) => boolean): Generator<number> {
  for (let i = n - 1; i >= 0; i--) {
    const s = at(i);
    if (!skip(s)) yield s;
  }
}

/**
 * The cached slots from the first of the order, each run of one number from its end (ties the higher slot first),
 * but those skipped: the run's end found by a galloping search, so that a run of many ties costs what of it is shown.
 */
function* cachedAscending(n: number, at: At, key: (i: number) => number, skip: (s: number) => boolean): Generator<number> {
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
      if (!skip(s)) yield s;
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
 * A snapshot's order section (renumbered slots by `key`, ties by slot), a slice at a time: for created, the slots'
 * own order where it never decreases over them (`ordered`); else the cached order (dead and moved slots dropped)
 * merged with the live slots folded or moved since.
 */
export function writeOrder(frame: Frame, c: StepCursor, sink: StepSink, key: OrderKey, ordered: boolean): boolean {
  if (key === 'created' && ordered) {
    while (c.pos < frame.live && !sink.full) sink.u32(c.pos++);
    return c.pos >= frame.live;
  }
  const bank = frame.bank;
  const at = cachedOrder(bank, key, true)!;
  const moved = movedSlots(bank, key) ?? NONE;
  const order = key === 'created' && bank.cache.createdOrdered === true ? undefined : bank.cache[ORDER_SECTION[key]];
  const column = bank[key];
  const value = (s: number) => column.get(s);
  const later: number[] = [];
  for (const s of moved) if (frame.slotOf(s) >= 0) later.push(s);
  for (let s = frame.base; s < frame.slots; s++) if (frame.slotOf(s) >= 0) later.push(s);
  later.sort((x, y) => value(x) - value(y) || x - y);
  const takeLater = (k: number, slot: number) => {
    for (; c.sub < later.length; c.sub++) {
      const l = later[c.sub]!;
      const v = value(l);
      if (!(v < k || (v === k && l < slot))) return;
      sink.u32(frame.slotOf(l));
    }
  };
  while (c.pos < frame.base && !sink.full) {
    const end = Math.min(frame.base, c.pos + frame.batch);
    const slots = order === undefined ? undefined : sliceOf(order, c.pos, end);
    sink.read((end - c.pos) * 4);
    for (let i = c.pos; i < end; i++) {
      const slot = slots === undefined ? at(i) : slots[i - c.pos]!;
      const n = frame.slotOf(slot);
      if (n < 0 || moved.has(slot)) continue;
      if (c.sub < later.length) takeLater(value(slot), slot);
      sink.u32(n);
    }
    c.pos = end;
  }
  if (c.pos < frame.base) return false;
  takeLater(Number.POSITIVE_INFINITY, 0);
  return true;
}

const keyCell = new Float64Array(1);
const keyWords = new Uint32Array(keyCell.buffer);
/** A number as two unsigned words that sort as it does (a streamed build's scratch sort: stream.ts); -0 as 0. */
export function numberSortKey(value: number): [hi: number, lo: number] {
  keyCell[0] = value === 0 ? 0 : value;
  const [lo, hi] = [keyWords[0]!, keyWords[1]!];
  return hi >= 0x80000000 ? [~hi >>> 0, ~lo >>> 0] : [(hi | 0x80000000) >>> 0, lo];
}
