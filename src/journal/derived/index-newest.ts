// Newest first: the entities whose current value of an ordered secondary key lies in a range, highest value
// first, and how many there are — from the index alone, without reading an entity. What a limited list needs
// to read only the rows it shows and say how many more there are.
//
// An entity's current entry is its latest (by the version each entry carries: the journal offset of the
// write that set it). Only entities with an entry in a frozen run or the log (few: what writers added since
// the partitions were merged) can have more than one entry, or a newer value outside the range, or a
// withdrawal: their entries decide by version, as a lookup's do. Every other entity's one partition entry in
// the range is current as it stands, so the partitions' range is counted and ordered without a map or an
// object per entry (the partitions are sorted by value, so it comes in order) — a list of 50 rows at 1M
// sessions does not pay for the 300k it does not show.
import type { EntryList } from './entries';
import { ENTRY_WORDS, FLAG_WITHDRAWN, joinOffset, sortKey } from './entries';
import type { IndexTables } from './index-levels';
import { entityOf } from './index-entries';

/** The entities by descending value: `next()` gives each one's key hash (hi, lo) and value, then undefined. */
export interface Newest {
  readonly total: number;
  next(): readonly [hi: number, lo: number, value: number] | undefined;
}

interface Latest {
  version: number;
  /** -1: withdrawn, or out of the range. */
  value: number;
  readonly hi: number;
  readonly lo: number;
}

const valueAt = (w: Uint32Array, x: number) => (w[x]! & 0xffffff) * 0x1_0000_0000 + w[x + 1]!;

/**
 * The entities of `space` whose current value is at most `atMost`, by descending value (ties by descending key
 * hash), leaving out `exclude` (entities as entityOf names them, `hi:lo:check`: ones the caller reads some
 * other way). An entity is its key hash and second hash: keys that share the 56-bit hash stay apart.
 */
export function newestInRange(tables: IndexTables, log: EntryList | undefined, space: number, atMost: number, exclude: ReadonlySet<string>): Newest {
  const [fromHi, fromLo] = [(space << 24) >>> 0, 0];
  const [toHi, toLo] = sortKey(space, atMost);
  const [endHi, endLo] = [((space << 24) | 0xffffff) >>> 0, 0xffffffff];
  const inRange = (w: Uint32Array, x: number) => !(w[x + 6]! & FLAG_WITHDRAWN) && (w[x]! < toHi || (w[x] === toHi && w[x + 1]! <= toLo));
  // Entities written since the partitions: every entry of the space in the frozen runs (the first one whole,
  // merged part included: its entities may still have an older entry in a partition not merged yet) and the log.
  const touched = new Map<string, Latest>();
  const take = (w: Uint32Array, j: number) => {
    const x = j * ENTRY_WORDS;
    const id = entityOf(w, x);
    if (exclude.has(id)) return;
    const version = joinOffset(w[x + 4]!, w[x + 5]!);
    const before = touched.get(id);
    if (before !== undefined && before.version > version) return;
    const value = inRange(w, x) ? valueAt(w, x) : -1;
    if (before === undefined) touched.set(id, { version, value, hi: w[x + 2]!, lo: w[x + 3]! });
    else Object.assign(before, { version, value });
  };
  for (const run of tables.manifest.frozen) tables.table(run).range(fromHi, fromLo, endHi, endLo, take);
  if (log !== undefined) {
    const w = log.words;
    for (let j = 0; j < log.count; j++) if (w[j * ENTRY_WORDS]! >>> 24 === space) take(w, j);
  }
  // A quick test first (a bitmap of the key hashes' low 16 bits: an int, never a boxed number), then the exact one.
  const special = new Uint8Array(0x10000);
  for (const e of touched.values()) special[e.lo & 0xffff] = 1;
  for (const id of exclude) special[Number(id.split(':')[1]) & 0xffff] = 1;
  // The partitions' other entries in the range, ascending (partitions in order, each sorted).
  // (value, hi, lo) per entry, in a typed array: three numbers an entry, unboxed, for hundreds of thousands.
  let plain = new Float64Array(3 * 1024);
  let n = 0;
  tables.partSpans(fromHi, fromLo, toHi, toLo, (w, start, end) => {
    for (let j = start; j < end; j++) {
      const x = j * ENTRY_WORDS;
      if (special[w[x + 3]! & 0xffff] === 1) {
        const id = entityOf(w, x);
        if (exclude.has(id)) continue;
        if (touched.has(id)) {
          take(w, j);
          continue;
        }
      }
      if (w[x + 6]! & FLAG_WITHDRAWN) continue;
      if (n + 3 > plain.length) {
        const grown = new Float64Array(plain.length * 2);
        grown.set(plain);
        plain = grown;
      }
      plain[n] = (w[x]! & 0xffffff) * 0x1_0000_0000 + w[x + 1]!;
      plain[n + 1] = w[x + 2]!;
      plain[n + 2] = w[x + 3]!;
      n += 3;
    }
  });
  const current = [...touched.values()].filter((e) => e.value >= 0);
  current.sort((a, b) => b.value - a.value || b.hi - a.hi || b.lo - a.lo);
  // Merged from the end of the ascending partition entries and the start of the descending touched ones.
  let p = n - 3;
  let c = 0;
  return {
    total: n / 3 + current.length,
    next() {
      const t = current[c];
      if (p < 0 && t === undefined) return undefined;
      if (t === undefined || (p >= 0 && (plain[p]! - t.value || plain[p + 1]! - t.hi || plain[p + 2]! - t.lo) > 0)) {
        const out = [plain[p + 1]!, plain[p + 2]!, plain[p]!] as const;
        p -= 3;
        return out;
      }
      c++;
      return [t.hi, t.lo, t.value] as const;
    },
  };
}
