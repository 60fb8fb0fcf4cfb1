// Newest first: the entities whose current value of an ordered secondary key lies in a range, highest value
// first, and how many there are — from the index alone, without reading an entity. What a limited list needs
// to read only the rows it shows and say how many more there are.
//
// An entity's current entry is its latest (by the version each entry carries: the journal offset of the
// write that set it) among the partitions' entries in the range and every entry of the space in the frozen
// runs and the log (few), so that a newer value outside the range, or a withdrawal, hides an older one in it.
import type { EntryList } from './entries';
import { ENTRY_WORDS, FLAG_WITHDRAWN, joinOffset, sortKey } from './entries';
import type { IndexTables } from './index-levels';

/** Entity key hashes (hi, lo) by descending value, each with its value, and their count. */
export interface Newest {
  readonly order: readonly (readonly [hi: number, lo: number, value: number])[];
  readonly total: number;
}

export function newestInRange(tables: IndexTables, log: EntryList | undefined, space: number, atMost: number): Newest {
  const [fromHi, fromLo] = [(space << 24) >>> 0, 0];
  const [toHi, toLo] = sortKey(space, atMost);
  const [endHi, endLo] = [((space << 24) | 0xffffff) >>> 0, 0xffffffff];
  // Per entity: its latest entry's version, value (-1: withdrawn or out of range), and key hash.
  const latest = new Map<string, { version: number; value: number; hi: number; lo: number }>();
  const take = (w: Uint32Array, j: number) => {
    const x = j * ENTRY_WORDS;
    const id = `${w[x + 2]}:${w[x + 3]}`;
    const version = joinOffset(w[x + 4]!, w[x + 5]!);
    const before = latest.get(id);
    if (before !== undefined && before.version > version) return;
    const inRange = !(w[x + 6]! & FLAG_WITHDRAWN) && (w[x]! < toHi || (w[x] === toHi && w[x + 1]! <= toLo));
    latest.set(id, { version, value: inRange ? (w[x]! & 0xffffff) * 0x1_0000_0000 + w[x + 1]! : -1, hi: w[x + 2]!, lo: w[x + 3]! });
  };
  tables.range(fromHi, fromLo, toHi, toLo, take, 'parts');
  tables.range(fromHi, fromLo, endHi, endLo, take, 'frozen');
  if (log !== undefined) {
    const w = log.words;
    for (let j = 0; j < log.count; j++) if (w[j * ENTRY_WORDS]! >>> 24 === space) take(w, j);
  }
  const current = [...latest.values()].filter((e) => e.value >= 0);
  current.sort((a, b) => b.value - a.value || b.hi - a.hi || b.lo - a.lo);
  return { order: current.map((e) => [e.hi, e.lo, e.value] as const), total: current.length };
}
