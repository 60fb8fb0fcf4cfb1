// The tally (StoreSpec.tally): records counted per hour and series in the store's index, in the space after every
// secondary name's. Each record's entry (a count of one: entries.ts tallyEntry) goes where its key line goes — a
// writer's log block, a verified tail, a replay's or a rebuild's base — so the counts cover exactly the journal prefix
// the index is bound to, and a read adds the records past it from the verified tail, as every read through the index
// does. Entries of one hour and series are summed whenever a run is written (combineTally): a base holds one per hour
// and series, so a window's counts cost the window's hours, not its records.
import type { JournalRecord } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import { ENTRY_WORDS, EntryList, sortKey, TALLY_SPACE, tallyEntry } from './entries';

/** `sorted` (entries in sort order) with the tally's entries of one hour and series summed into one. */
export function combineTally(sorted: Uint32Array): Uint32Array {
  const n = sorted.length / ENTRY_WORDS;
  // The tally's space sorts last: its entries are the run's end.
  let first = n;
  while (first > 0 && sorted[(first - 1) * ENTRY_WORDS]! >>> 24 === TALLY_SPACE) first--;
  let same = false;
  for (let i = first + 1; i < n && !same; i++) same = sameCount(sorted, i - 1, i);
  if (!same) return sorted;
  const out = new Uint32Array(sorted.length);
  out.set(sorted.subarray(0, first * ENTRY_WORDS));
  let m = first;
  for (let i = first; i < n; i++) {
    if (m > first && sameCount(out, m - 1, sorted, i)) {
      out[(m - 1) * ENTRY_WORDS + 4] = (out[(m - 1) * ENTRY_WORDS + 4]! + sorted[i * ENTRY_WORDS + 4]!) >>> 0;
      continue;
    }
    out.set(sorted.subarray(i * ENTRY_WORDS, (i + 1) * ENTRY_WORDS), m * ENTRY_WORDS);
    m++;
  }
  return out.slice(0, m * ENTRY_WORDS);
}

/** Whether entry i of `a` and entry j of `b` (`a` when not given) count the same hour and series. */
function sameCount(a: Uint32Array, i: number, b: Uint32Array | number, j?: number): boolean {
  const [w, k] = typeof b === 'number' ? [a, b] : [b, j!];
  const x = i * ENTRY_WORDS;
  const y = k * ENTRY_WORDS;
  return a[x] === w[y] && a[x + 1] === w[y + 1] && a[x + 2] === w[y + 2] && a[x + 3] === w[y + 3];
}

/** What sumTally reads the index's runs through (index-levels.ts IndexTables). */
interface RangeReader {
  range(fromHi: number, fromLo: number, toHi: number, toLo: number, visit: (words: Uint32Array, index: number) => void): void;
}

/**
 * The counts of the hours `from` to `to` (hour numbers: ms since the epoch / 3,600,000), `counts[hour - from][series]`,
 * from the index's runs and the unsorted lists (the log, the verified tail). Every run read may throw DerivedDamage.
 */
export function sumTally(tables: RangeReader, lists: readonly (EntryList | undefined)[], from: number, to: number, series: number): number[][] {
  const counts = Array.from({ length: Math.max(0, to - from + 1) }, () => new Array<number>(series).fill(0));
  const [fromHi, fromLo] = sortKey(TALLY_SPACE, from);
  const [toHi, toLo] = sortKey(TALLY_SPACE, to);
  const add = (w: Uint32Array, j: number) => {
    const x = j * ENTRY_WORDS;
    const hour = (w[x]! & 0xffffff) * 0x1_0000_0000 + w[x + 1]!;
    const row = counts[hour - from];
    const s = w[x + 2]!;
    if (row !== undefined && s < series) row[s]! += w[x + 4]!;
  };
  tables.range(fromHi, fromLo, toHi, toLo, add);
  for (const list of lists) {
    if (list === undefined) continue;
    const w = list.words;
    for (let j = 0; j < list.count; j++) if (w[j * ENTRY_WORDS]! >>> 24 === TALLY_SPACE) add(w, j);
  }
  return counts;
}

/**
 * A streamed rebuild's counts (rebuild.ts), bounded by hours × series: the records of a batch are held apart until it
 * is whole — a batch that never completed is the torn tail, and no part of the index.
 */
export class TallyCounter {
  private readonly whole = new Map<number, number>();
  private open = new Map<number, number>();
  private openAt = 0;
  private left = 0;

  constructor(private readonly spec: StoreSpec<any>) {}

  /** A record the scan read at `offset` (before its batch is known whole). */
  add(record: JournalRecord, offset: number): void {
    if (record.batch !== undefined && record.batch >= 2) this.start(offset, record.batch - 1);
    else if (this.left > 0) this.left--;
    else this.start(offset, 0);
    const one = new EntryList(1);
    tallyEntry(one, this.spec, record);
    if (one.count === 0) return;
    const w = one.words;
    const k = ((w[0]! & 0xffffff) * 0x1_0000_0000 + w[1]!) * 256 + w[2]!;
    this.open.set(k, (this.open.get(k) ?? 0) + 1);
  }

  /** The counts of the records before `end` (the torn tail's offset, or the journal's size), in sort order. */
  push(end: number, out: { pushWords(...w: [number, number, number, number, number, number, number, number]): void }): void {
    if (this.openAt < end) this.start(end, 0);
    for (const k of [...this.whole.keys()].sort((a, b) => a - b)) {
      const [hi, lo] = sortKey(TALLY_SPACE, Math.floor(k / 256));
      out.pushWords(hi, lo, k % 256, 0, this.whole.get(k)!, 0, 0, 0);
    }
  }

  /** The batch before is whole: its counts join the rest; a new one starts at `offset`. */
  private start(offset: number, left: number): void {
    for (const [k, n] of this.open) this.whole.set(k, (this.whole.get(k) ?? 0) + n);
    this.open = new Map();
    this.openAt = offset;
    this.left = left;
  }
}
