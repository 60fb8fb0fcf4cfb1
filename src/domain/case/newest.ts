// `case list` newest first with a limit and a filter (--only-success/--only-failure, --tag): read from the
// bank's columns and postings (the derived layer: cache/cases.jsonl.state, or a replay), so that only the cases
// shown have their text read — not every case, as a whole listing reads them.
import type { Case } from './case';
import { CASE_STORE, holds, resultCases, type CaseScope } from './store';
import { tagMark } from '../../journal/derived/bank/layout';
import { keyOrder, type KeyOrder } from '../../journal/derived/bank/key-order';
import type { CaseBank } from './bank';
import type { SortSpec } from '../list-window';
import { countedByMarks, FACT, fromRows, NEWEST, type NewestFilter, timesInRange, wanted, YEAR_0, YEAR_10000 } from './newest-rows';

export type { NewestFilter } from './newest-rows';

/**
 * The newest `limit` live cases that pass `filter` (newest: the reverse of the order they were last written, as
 * `case list` shows them), and how many pass it in all when `count` (with tags each candidate's text is read to
 * check its tags; a database counts its rows), else maybe undefined.
 */
export async function newestCases(
  scope: CaseScope,
  filter: NewestFilter,
  limit: number,
  count: boolean,
): Promise<{ cases: Case[]; total: number | undefined }> {
  const rows = await fromRows(scope, filter, [NEWEST], limit, count);
  if (rows !== undefined) return rows;
  // The bank as its snapshot reads on demand (readWith): the columns' pages the slots shown need, not the whole body.
  // With tags, the rarest one's postings from the last: a page of a few matches does not walk every case.
  return scope.dir.readWith(CASE_STORE, (bank) => {
    const candidates = rarestSlots(bank, filter.tags ?? []);
    return newestOfBank(scope, bank, filter, limit, count, candidates?.[Symbol.iterator]());
  });
}

/** The live slots from the last: newest first. */
function* newestSlots(bank: CaseBank): Generator<number> {
  for (let s = bank.slots - 1; s >= 0; s--) if (bank.alive.get(s) === 1) yield s;
}

/** newestCases from the bank: its live slots from the last (or in `order`: live slots, each once). */
async function newestOfBank(
  scope: CaseScope,
  bank: CaseBank,
  filter: NewestFilter,
  limit: number,
  count: boolean,
  order: Iterator<number> = newestSlots(bank),
): Promise<{ cases: Case[]; total: number | undefined }> {
  const tags = filter.tags ?? [];
  const passes = numbersPass(bank, filter.success, tags);
  // Live slots in order, a batch at a time, until the limit is met (or, to count them, all of them).
  let done = false;
  const next = (size: number): number[] => {
    const batch: number[] = [];
    while (!done && batch.length < size) {
      const slot = order.next();
      if (slot.done === true) done = true;
      else if (passes(slot.value)) batch.push(slot.value);
    }
    return batch;
  };
  if (tags.length === 0) {
    const shown = next(limit);
    // Nothing but the outcome to count: the slots that pass it, after those shown.
    let total: number | undefined;
    if (count) total = filter.success === undefined ? bank.liveCount : shown.length + next(Number.MAX_SAFE_INTEGER).length;
    return { cases: await resultCases(scope.dir, bank, shown), total };
  }
  // Each candidate's tags are checked as the case shows them.
  const cases: Case[] = [];
  let total = 0;
  const byMarks = count && countedByMarks(tags);
  const reading = count && !byMarks;
  while (!done && (reading || cases.length < limit)) {
    for (const c of await resultCases(scope.dir, bank, next(wanted(reading, limit, cases.length)))) {
      if (!tags.every((t) => c.tags.includes(t))) continue;
      total++;
      if (cases.length < limit) cases.push(c);
    }
  }
  // Every candidate shows its tags: how many match is how many live slots pass, counted over the rarest tag's postings.
  if (byMarks) total = passingCount(bank, filter.success, tags);
  return { cases, total: count ? total : undefined };
}

/**
 * The live slots among the postings of the tag that has fewest, newest first (postings are in slot order): every
 * slot that may pass a filter by these tags, at what the postings cost, not the bank; undefined without tags.
 */
function rarestSlots(bank: CaseBank, tags: readonly string[]): number[] | undefined {
  if (tags.length === 0) return undefined;
  let rarest: { cached: Uint32Array; later: readonly number[] } | undefined;
  for (const term of new Set(tags.map(tagMark))) {
    const id = bank.termIdOf(term);
    // A tag no case holds.
    if (id === undefined) return [];
    const list = bank.postingsOf(id);
    if (rarest === undefined || list.cached.length + list.later.length < rarest.cached.length + rarest.later.length) rarest = list;
  }
  const slots: number[] = [];
  for (const list of [rarest!.later, rarest!.cached]) for (let i = list.length - 1; i >= 0; i--) if (bank.alive.get(list[i]!) === 1) slots.push(list[i]!);
  return slots;
}

/** How many live slots pass numbersPass: those of the rarest tag's postings that do (a walk of every live slot cost 200k checks at 200k cases). */
function passingCount(bank: CaseBank, success: boolean | undefined, tags: readonly string[]): number {
  const passes = numbersPass(bank, success, tags);
  let n = 0;
  for (const slot of rarestSlots(bank, tags) ?? []) if (passes(slot)) n++;
  return n;
}

/**
 * Whether a slot may pass the filter, by its columns and postings alone: a tag by its mark's postings (layout.ts
 * tagMark: plain on an encrypted store too, no key needed), the shown cases' text saying the last word.
 */
function numbersPass(bank: CaseBank, success: boolean | undefined, tags: readonly string[]): (slot: number) => boolean {
  const postings: { cached: Uint32Array; later: readonly number[] }[] = [];
  for (const term of new Set(tags.map(tagMark))) {
    const id = bank.termIdOf(term);
    // A tag no case holds.
    if (id === undefined) return () => false;
    const list = bank.postingsOf(id);
    postings.push({ cached: list.cached, later: list.later });
  }
  const later = postings.map((list) => new Set(list.later));
  return (slot) =>
    (success === undefined || (bank.success.get(slot) === 1) === success) && postings.every((list, i) => holds(list.cached, slot) || later[i]!.has(slot));
}

/** A tag's postings are sorted rather than the order walked when they hold less than 1/FEW of the live cases. */
const FEW = 8;

/** The sort keys a bank's columns hold as the Case shows them (created_at as canonical text orders as its time). */
export type ColumnOrder = 'created' | 'reward' | 'reused';
export const COLUMN_ORDERS: ReadonlySet<string> = new Set<ColumnOrder>(['created', 'reward', 'reused']);

/**
 * As newestCases, sorted by a column (`--sort created|reward|reused`, ties newest first as `case list` keeps
 * them): the first `limit` live cases that pass `filter`, from the columns and postings, only the shown ones (and,
 * with tags, the candidates up to them) read; undefined when the columns cannot tell the order a list of whole
 * cases would (a time past year 9999 or before year 0, whose text does not order as the time): the caller lists.
 */
export async function sortedCases(
  scope: CaseScope,
  filter: NewestFilter,
  sort: SortSpec<ColumnOrder>,
  limit: number,
  count: boolean,
): Promise<{ cases: Case[]; total: number | undefined } | undefined> {
  const tags = filter.tags ?? [];
  // A time whose text does not order as the time: the whole list (as the bank's columns below).
  if (scope.dir.readTermRows !== undefined && (sort.key !== 'created' || (await timesInRange(scope, filter)))) {
    const rows = await fromRows(scope, filter, [{ fact: FACT[sort.key], descending: sort.descending }, NEWEST], limit, count);
    if (rows !== undefined) return rows;
  }
  return scope.dir.readWith(CASE_STORE, async (bank) => {
    // With tags whose rarest holds few of the cases, those sorted (ties the higher slot first, as a list keeps
    // them): a page of a few matches walks neither the order nor every case — by created when each one's text orders
    // as its time (else the whole list).
    const candidates = rarestSlots(bank, tags);
    if (candidates !== undefined && candidates.length * FEW < bank.liveCount) {
      const column = bank[sort.key];
      const keyed = candidates.map((slot) => [column.get(slot), slot] as const);
      if (sort.key === 'created' && keyed.some(([t]) => !(t >= YEAR_0 && t < YEAR_10000))) return undefined;
      const sign = sort.descending ? -1 : 1;
      const order = keyed.sort((x, y) => sign * (x[0] - y[0]) || y[1] - x[1]).map(([, slot]) => slot);
      return newestOfBank(scope, bank, filter, limit, count, order[Symbol.iterator]());
    }
    // Either way, where the bank keeps the order (key-order.ts): the slots read as the page needs them, as
    // newestCases reads its own — by created when every live one's text orders as its time (else the whole list).
    const kept = keyOrder(bank, sort.key);
    if (kept !== undefined) {
      if (sort.key === 'created' && !timesOrderAsText(bank, kept)) return undefined;
      return newestOfBank(scope, bank, filter, limit, count || tags.length === 0, kept.slots(sort.descending));
    }
    const passes = numbersPass(bank, filter.success, tags);
    const column = sort.key === 'created' ? bank.created : sort.key === 'reward' ? bank.reward : bank.reused;
    // The columns read in bulk (a few slices of the snapshot's pages), the slots that pass kept newest first.
    const n = bank.slots;
    const keys = column.range(0, n);
    const alive = bank.alive.range(0, n);
    const slots = new Uint32Array(n);
    let m = 0;
    for (let slot = n - 1; slot >= 0; slot--) {
      if (alive[slot] !== 1 || !passes(slot)) continue;
      if (sort.key === 'created' && !(keys[slot]! >= YEAR_0 && keys[slot]! < YEAR_10000)) return undefined;
      slots[m++] = slot;
    }
    // Ties keep the newest-first order: the higher slot first.
    const sign = sort.descending ? -1 : 1;
    const before = (x: number, y: number) => {
      const d = sign * (keys[x]! - keys[y]!);
      return d < 0 || (d === 0 && x > y);
    };
    if (tags.length === 0) {
      const shown = firstOf(slots.subarray(0, m), limit, before);
      return { cases: await resultCases(scope.dir, bank, shown), total: m };
    }
    const order = firstOf(slots.subarray(0, m), m, before);
    const cases: Case[] = [];
    let total = 0;
    const byMarks = count && countedByMarks(tags);
    const reading = count && !byMarks;
    let at = 0;
    while (at < order.length && (reading || cases.length < limit)) {
      const size = wanted(reading, limit, cases.length);
      const batch = order.slice(at, at + size);
      at += size;
      for (const c of await resultCases(scope.dir, bank, batch)) {
        if (!tags.every((t) => c.tags.includes(t))) continue;
        total++;
        if (cases.length < limit) cases.push(c);
      }
    }
    if (byMarks) total += Math.max(0, order.length - at);
    return { cases, total: count ? total : undefined };
  });
}

/** Whether the least and the most created of the live slots (the bank keeping their order) are in years 0–9999. */
function timesOrderAsText(bank: CaseBank, order: KeyOrder): boolean {
  const inRange = (first: IteratorResult<number>) =>
    first.done === true || (bank.created.get(first.value) >= YEAR_0 && bank.created.get(first.value) < YEAR_10000);
  return inRange(order.slots(false).next()) && inRange(order.slots(true).next());
}

/** The first `k` of `slots` in the order `before` gives (a strict total order), in that order: a bounded heap of them. */
function firstOf(slots: Uint32Array, k: number, before: (x: number, y: number) => boolean): number[] {
  if (k >= slots.length) return [...slots].sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
  // A heap whose root is the last of the k kept: a slot that does not come before it is passed over.
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let last = i;
      if (l < heap.length && before(heap[last]!, heap[l]!)) last = l;
      if (r < heap.length && before(heap[last]!, heap[r]!)) last = r;
      if (last === i) return;
      [heap[i], heap[last]] = [heap[last]!, heap[i]!];
      i = last;
    }
  };
  for (const slot of slots) {
    if (heap.length < k) {
      heap.push(slot);
      for (let i = heap.length - 1; i > 0 && before(heap[(i - 1) >> 1]!, heap[i]!); i = (i - 1) >> 1) {
        const p = (i - 1) >> 1;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      }
    } else if (k > 0 && before(slot, heap[0]!)) {
      heap[0] = slot;
      down(0);
    }
  }
  return heap.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
}
