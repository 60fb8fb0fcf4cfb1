// Newest first: the entities whose current value of an ordered secondary key lies in a range, highest value
// first, and how many there are — from the index alone, without reading an entity. What a limited list needs
// to read only the rows it shows and say how many more there are.
//
// An entity's current entry is its latest (by the version each entry carries: the journal offset of the
// write that set it). Only entities with an entry in a frozen run or the log (few: what writers added since
// the partitions were merged) can have more than one entry, or a newer value outside the range, or a
// withdrawal: their entries decide by version, as a lookup's do. Every other entity's one partition entry in
// the range is current as it stands, so the partitions' range is counted without a map, an object or a copy
// per entry, and read from its highest value down (the partitions are sorted by value), a page at a time, only
// as far as the caller reads: a list of 50 rows at 1M sessions reads its rows' pages, and counts the 300k it
// does not show only when it says how many more there are.
import type { EntryList } from './entries';
import { entityOf, ENTRY_WORDS, FLAG_WITHDRAWN, joinOffset, sortKey } from './entries';
import type { IndexTables } from './index-levels';

/**
 * The entities by descending value: `next()` gives each one's key hash (hi, lo) and value, then undefined.
 * `total`: how many there are, when they were counted (undefined when not asked for).
 */
export interface Newest {
  readonly total: number | undefined;
  next(): readonly [hi: number, lo: number, value: number] | undefined;
}

/**
 * Thrown when a partition holds an entry of an entity written since that is newer than the entity's entries in
 * the frozen runs and the log, which merges never make: the index is then not what this reader takes it for,
 * and the caller drops and rebuilds it.
 */
export class NewestOutOfStep extends Error {}

interface Latest {
  version: number;
  /** -1: withdrawn, or out of the range. */
  value: number;
  readonly hi: number;
  readonly lo: number;
}

const valueAt = (w: Uint32Array, x: number) => (w[x]! & 0xffffff) * 0x1_0000_0000 + w[x + 1]!;

/**
 * The entities of `space` whose current value is at most `atMost` (and at least `opts.atLeast`), by descending value (ties by descending key
 * hash). `log`: the entries written since the partitions (the index's log, and those of the entities written
 * past it, which the caller makes). An entity is its key hash and second hash: keys that share the 56-bit hash
 * stay apart.
 */
export function newestInRange(
  tables: IndexTables,
  log: EntryList | undefined,
  space: number,
  atMost: number,
  opts: { count?: boolean | undefined; atLeast?: number | undefined } = {},
): Newest {
  const [fromHi, fromLo] = opts.atLeast === undefined ? [(space << 24) >>> 0, 0] : sortKey(space, opts.atLeast);
  const [toHi, toLo] = sortKey(space, atMost);
  const [startHi, endHi, endLo] = [(space << 24) >>> 0, ((space << 24) | 0xffffff) >>> 0, 0xffffffff];
  const inRange = (w: Uint32Array, x: number) =>
    !(w[x + 6]! & FLAG_WITHDRAWN) && (w[x]! < toHi || (w[x] === toHi && w[x + 1]! <= toLo)) && (w[x]! > fromHi || (w[x] === fromHi && w[x + 1]! >= fromLo));
  // Entities written since the partitions: every entry of the space in the frozen runs (the first one whole,
  // merged part included: its entities may still have an older entry in a partition not merged yet) and the log.
  const touched = new Map<string, Latest>();
  const take = (w: Uint32Array, j: number) => {
    const x = j * ENTRY_WORDS;
    const id = entityOf(w, x);
    const version = joinOffset(w[x + 4]!, w[x + 5]!);
    const before = touched.get(id);
    if (before !== undefined && before.version > version) return;
    const value = inRange(w, x) ? valueAt(w, x) : -1;
    if (before === undefined) touched.set(id, { version, value, hi: w[x + 2]!, lo: w[x + 3]! });
    else Object.assign(before, { version, value });
  };
  // The whole space: an entity's newer entry outside the range decides too.
  for (const run of tables.manifest.frozen) tables.table(run).range(startHi, 0, endHi, endLo, take);
  if (log !== undefined) {
    const w = log.words;
    for (let j = 0; j < log.count; j++) if (w[j * ENTRY_WORDS]! >>> 24 === space) take(w, j);
  }
  // A quick test first (a bitmap of the key hashes' low 16 bits: an int, never a boxed number), then the exact one.
  const special = new Uint8Array(0x10000);
  for (const e of touched.values()) special[e.lo & 0xffff] = 1;
  const current = [...touched.values()].filter((e) => e.value >= 0);
  current.sort((a, b) => b.value - a.value || b.hi - a.hi || b.lo - a.lo);
  const next = descending(tables, [fromHi, fromLo, toHi, toLo], touched, current, special);
  if (opts.count === false) return { total: undefined, next };
  // Counted: the partitions' entries in the range that are current as they stand, without a map, an object or a
  // copy per entry (a list of 50 rows at 1M sessions counts the 300k it does not show, and reads only its own).
  let counted = 0;
  tables.partSpans(fromHi, fromLo, toHi, toLo, (w, start, end) => {
    for (let j = start; j < end; j++) {
      const x = j * ENTRY_WORDS;
      if (special[w[x + 3]! & 0xffff] === 1 && !standsAsItIs(w, x, touched)) continue;
      if (!(w[x + 6]! & FLAG_WITHDRAWN)) counted++;
    }
  });
  return { total: counted + current.length, next };
}

/**
 * Whether a partition's entry, of an entity whose key hash the quick test marks, is its entity's current one:
 * not when it was written since (`touched`: its entries in the frozen runs and the log decide). None of those is
 * ever older than a partition's entry of the same entity (a merge copies a run's entries, never newer ones): one
 * that is means the index is out of step.
 */
function standsAsItIs(w: Uint32Array, x: number, touched: ReadonlyMap<string, Latest>): boolean {
  const id = entityOf(w, x);
  const mine = touched.get(id);
  if (mine === undefined) return true;
  if (joinOffset(w[x + 4]!, w[x + 5]!) > mine.version) throw new NewestOutOfStep();
  return false;
}

/**
 * The `next()` of newestInRange: the partitions' entries are read from the highest down, a page at a time, as
 * it is asked for them, so a list of 50 rows reads their pages, not the range's (a million at 1M). The
 * entities written since the partitions (`current`, those of them in the range, by descending value) are
 * merged in their places.
 */
function descending(
  tables: IndexTables,
  [fromHi, fromLo, toHi, toLo]: readonly [number, number, number, number],
  touched: ReadonlyMap<string, Latest>,
  current: readonly Latest[],
  special: Uint8Array,
): Newest['next'] {
  let spans: ReturnType<IndexTables['partSpansDown']> | undefined;
  let words: Uint32Array | undefined;
  let start = 0;
  let j = -1;
  /** The partitions' next entry down that is current as it stands ([value, hi, lo]), or undefined past the range. */
  const partNext = (): readonly [value: number, hi: number, lo: number] | undefined => {
    spans ??= tables.partSpansDown(fromHi, fromLo, toHi, toLo);
    for (;;) {
      if (words === undefined || j < start) {
        const span = spans.next();
        if (span.done) return undefined;
        [words, start] = span.value;
        j = span.value[2] - 1;
      }
      const w = words;
      const x = j-- * ENTRY_WORDS;
      if (special[w[x + 3]! & 0xffff] === 1 && !standsAsItIs(w, x, touched)) continue;
      if (w[x + 6]! & FLAG_WITHDRAWN) continue;
      return [valueAt(w, x), w[x + 2]!, w[x + 3]!];
    }
  };
  let part: ReturnType<typeof partNext> | null = null;
  let c = 0;
  return () => {
    if (part === null) part = partNext();
    const t = current[c];
    if (part === undefined && t === undefined) return undefined;
    // Ties by descending key hash: the partition's entry first when it sorts after the touched one.
    if (t === undefined || (part !== undefined && (part[0] - t.value || part[1] - t.hi || part[2] - t.lo) > 0)) {
      const out = [part![1], part![2], part![0]] as const;
      part = partNext();
      return out;
    }
    c++;
    return [t.hi, t.lo, t.value] as const;
  };
}
