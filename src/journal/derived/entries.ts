// Over 300 lines: the entry layout and the entries a store's records and entities make, one file for the format.
// Index entries: fixed 32-byte records of eight little-endian u32 words, ordered by their first four.
//
//   word 0–1  the sort key: (space << 24 | 24 high bits of a 56-bit value, 32 low bits)
//   word 2–7  the payload, by space:
//     key line     space 0: offset (hi, lo), length, line, flags (bit 0: the record resets its entity), the
//                  key's second hash (keyCheck; 0 only by chance: then not known)
//     secondary    space 1 + i (the store's i-th named index): value in the key; key hash (hi, lo),
//                  version (the journal offset of the write that set it, hi, lo), flags (bit 1: withdrawn),
//                  the key's second hash (with the key hash, the entity's identity: index-entries.ts entityOf)
//     tally        space 255 (StoreSpec.tally): the hour of the records' ts in the key; series, 0, count (tally.ts)
// A key or a string value becomes a 56-bit hash (FNV-1a 64 folded); collisions are harmless because every
// line and entity read through the index is checked against its real key, and a key line's second hash tells
// the entities that share the 56 bits apart before their lines are read (StoreIndex.foldHash). A value of a prefixed name
// (StoreSpec.secondary.prefixed) keeps its first 7 bytes in order instead (textKey), so that a prefix is a range.

import type { JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import { testHook } from '../../shared/test-hooks';

export const ENTRY_WORDS = 8;
export const ENTRY_BYTES = ENTRY_WORDS * 4;
export const FLAG_RESET = 1;
export const FLAG_WITHDRAWN = 2;
export const KEY_SPACE = 0;
/** The space of the tally's counts: after every secondary name's (each a space of its own from 1). */
export const TALLY_SPACE = 255;
const HOUR_MS = 3_600_000;
const TWO32 = 0x1_0000_0000;

/**
 * CRUX_TEST_HASH56_BITS=n keeps only the low n bits of every 56-bit hash (read once, at load): tests of keys
 * and values that share a hash, which real keys do once in ~2^28 pairs.
 */
const testHashBits = testHook('CRUX_TEST_HASH56_BITS');
const TEST_HASH_MASK = testHashBits === undefined ? undefined : 2 ** Number(testHashBits) - 1;

/** A 56-bit hash of a string as (hi 24 bits, lo 32 bits). */
export function hash56(text: string): [number, number] {
  // FNV-1a over UTF-16 units, in two 32-bit lanes (different offsets and a cross-mix), folded to 56 bits.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c ^ (a >>> 15), 0x85ebca6b);
  }
  a ^= b >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  b ^= a >>> 16;
  if (TEST_HASH_MASK !== undefined) return [0, (a >>> 0) & TEST_HASH_MASK];
  return [(b ^ (b >>> 24)) & 0xffffff, a >>> 0];
}

/** A second hash of a key (FNV-1a, another basis), independent of hash56: a key line's word 7. */
export function keyCheck(text: string): number {
  let h = 0x9dc5811c;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The sort key of a value in a space: a string hashes, a number (≥ 0, < 2^56) is kept in order. */
export function sortKey(space: number, value: string | number): [number, number] {
  if (typeof value === 'string') {
    const [hi, lo] = hash56(value);
    return [((space << 24) | hi) >>> 0, lo];
  }
  const v = Math.max(0, Math.min(Math.floor(value), 2 ** 56 - 1));
  return [((space << 24) | Math.floor(v / TWO32)) >>> 0, (v % TWO32) >>> 0];
}

/** Bytes of a text value a prefixed key keeps in order (the sort key's 56 bits). */
const TEXT_KEY_BYTES = 7;

/**
 * The leading bytes of `text` in an order-preserving form: each UTF-16 unit as UTF-8 would encode its value
 * (1–3 bytes), so that byte order is UTF-16 order — the order of JS's `<` and sort() — and the form of a
 * prefix begins the form of every text that starts with it. Cut at `max` bytes; `fill` pads the rest.
 */
function textBytes(text: string, max: number, fill: number): Uint8Array {
  const out = new Uint8Array(max).fill(fill);
  let n = 0;
  for (let i = 0; i < text.length && n < max; i++) {
    const u = text.charCodeAt(i);
    const bytes = u < 0x80 ? [u] : u < 0x800 ? [0xc0 | (u >> 6), 0x80 | (u & 63)] : [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 63), 0x80 | (u & 63)];
    for (const b of bytes) if (n < max) out[n++] = b;
  }
  return out;
}

const keyOfBytes = (space: number, b: Uint8Array): [number, number] => [
  ((space << 24) | (b[0]! << 16) | (b[1]! << 8) | b[2]!) >>> 0,
  ((b[3]! << 24) | (b[4]! << 16) | (b[5]! << 8) | b[6]!) >>> 0,
];

/** The sort key of a prefixed text value: its first 7 bytes in order (texts that share them tie). */
export const textKey = (space: number, text: string): [number, number] => keyOfBytes(space, textBytes(text, TEXT_KEY_BYTES, 0));

/**
 * How many of `text`'s leading UTF-16 units its sort key as a prefixed value holds whole (textKey): all of them
 * when it is that short; undefined when the 7th byte cuts a unit (texts that tie on the key may then differ in it).
 */
export function keptUnits(text: string): number | undefined {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    n += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
    if (n === TEXT_KEY_BYTES) return i + 1;
    if (n > TEXT_KEY_BYTES) return undefined;
  }
  return text.length;
}

/** The sort keys [from, to] that every text starting with `prefix` lies within. */
export function textRange(space: number, prefix: string): [fromHi: number, fromLo: number, toHi: number, toLo: number] {
  return [...keyOfBytes(space, textBytes(prefix, TEXT_KEY_BYTES, 0)), ...keyOfBytes(space, textBytes(prefix, TEXT_KEY_BYTES, 0xff))];
}

export const splitOffset = (offset: number): [number, number] => [Math.floor(offset / TWO32) >>> 0, (offset % TWO32) >>> 0];
export const joinOffset = (hi: number, lo: number) => hi * TWO32 + lo;

/** A growable array of entries. */
export class EntryList {
  words: Uint32Array;
  count = 0;

  constructor(capacity = 64) {
    this.words = new Uint32Array(Math.max(1, capacity) * ENTRY_WORDS);
  }

  static of(words: Uint32Array): EntryList {
    const list = new EntryList(0);
    list.words = words;
    list.count = words.length / ENTRY_WORDS;
    return list;
  }

  push(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6 = 0, w7 = 0): void {
    if ((this.count + 1) * ENTRY_WORDS > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    const at = this.count * ENTRY_WORDS;
    const w = this.words;
    w[at] = w0;
    w[at + 1] = w1;
    w[at + 2] = w2;
    w[at + 3] = w3;
    w[at + 4] = w4;
    w[at + 5] = w5;
    w[at + 6] = w6;
    w[at + 7] = w7;
    this.count += 1;
  }

  pushFrom(words: Uint32Array, index: number): void {
    const at = index * ENTRY_WORDS;
    this.push(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!, words[at + 4]!, words[at + 5]!, words[at + 6]!, words[at + 7]!);
  }

  append(other: EntryList): void {
    this.appendWords(other.view());
  }

  /** Appends whole entries (a run of a page, copied at once). */
  appendWords(words: Uint32Array): void {
    const need = this.count * ENTRY_WORDS + words.length;
    if (need > this.words.length) {
      const grown = new Uint32Array(Math.max(need, this.words.length * 2));
      grown.set(this.words.subarray(0, this.count * ENTRY_WORDS));
      this.words = grown;
    }
    this.words.set(words, this.count * ENTRY_WORDS);
    this.count += words.length / ENTRY_WORDS;
  }

  view(): Uint32Array {
    return this.words.subarray(0, this.count * ENTRY_WORDS);
  }

  /**
   * A copy sorted by the first four words (stable: equal entries keep their order). Past a few thousand
   * entries, a radix sort, least significant word first: each word's values gathered in the current order,
   * then sorted 11 bits a pass (a word all of one value, or a digit all alike, costs no pass). A comparison
   * sort of a rebuild's quarter-million entries cost three times as much. `words: 2` sorts by the first two
   * only, for entries pushed in the order of words 2–3 wherever words 0–1 are equal (the order is then the
   * same, at half the passes).
   */
  sorted(words: 2 | 4 = 4, scratch?: SortScratch): Uint32Array {
    const n = this.count;
    const w = this.words;
    let order = scratch === undefined ? new Uint32Array(n) : scratch.array(0, n);
    for (let i = 0; i < n; i++) order[i] = i;
    if (n < 4096)
      order.sort(words === 4 ? (x, y) => compareAt(w, x, w, y) || x - y : (x, y) => compareKey(w, x, w[y * ENTRY_WORDS]!, w[y * ENTRY_WORDS + 1]!) || x - y);
    else order = radixOrder(w, order, words, scratch ?? new SortScratch());
    const out = scratch === undefined ? new Uint32Array(n * ENTRY_WORDS) : scratch.array(4, n * ENTRY_WORDS);
    for (let to = 0; to < n; to++) {
      const from = order[to]! * ENTRY_WORDS;
      for (let k = 0; k < ENTRY_WORDS; k++) out[to * ENTRY_WORDS + k] = w[from + k]!;
    }
    return out;
  }
}

/**
 * The arrays a sort works in, kept from one sort to the next: a spilled sort sorts a buffer of the same size again
 * and again, and fresh arrays of megabytes each cost their pages' first touch (and the collector's notice). What a
 * sort with scratch returns is valid until the next sort with the same scratch.
 */
export class SortScratch {
  private readonly arrays: Uint32Array<ArrayBuffer>[] = [];

  /** Array `slot` (0–3: the radix sort's, 4: the sorted entries), `n` words long. */
  array(slot: number, n: number): Uint32Array<ArrayBuffer> {
    let a = this.arrays[slot];
    if (a === undefined || a.length < n) a = this.arrays[slot] = new Uint32Array(n);
    return a.subarray(0, n);
  }
}

/** `order` (entry indexes) stably sorted by the entries' first `words` words. */
function radixOrder(w: Uint32Array, start: Uint32Array<ArrayBuffer>, words: number, scratch: SortScratch): Uint32Array<ArrayBuffer> {
  const n = start.length;
  let order = start;
  let spare = scratch.array(1, n);
  let keys = scratch.array(2, n);
  let moved = scratch.array(3, n);
  const counts = new Uint32Array(2048);
  for (let word = words - 1; word >= 0; word--) {
    let alike = true;
    for (let i = 0; i < n; i++) {
      const v = w[order[i]! * ENTRY_WORDS + word]!;
      keys[i] = v;
      if (v !== keys[0]) alike = false;
    }
    if (alike) continue;
    for (let shift = 0; shift < 32; shift += 11) {
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[(keys[i]! >>> shift) & 0x7ff]! += 1;
      if (counts[(keys[0]! >>> shift) & 0x7ff] === n) continue;
      for (let d = 0, sum = 0; d < 2048; d++) {
        const c = counts[d]!;
        counts[d] = sum;
        sum += c;
      }
      for (let i = 0; i < n; i++) {
        const to = counts[(keys[i]! >>> shift) & 0x7ff]!++;
        spare[to] = order[i]!;
        moved[to] = keys[i]!;
      }
      [order, spare] = [spare, order];
      [keys, moved] = [moved, keys];
    }
  }
  return order;
}

/** Compares entry i of `a` with entry j of `b` on their first four words. */
export function compareAt(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  const x = i * ENTRY_WORDS;
  const y = j * ENTRY_WORDS;
  for (let k = 0; k < 4; k++) {
    const d = a[x + k]! - b[y + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** Compares entry i's sort key (words 0–1) with (hi, lo). */
export function compareKey(a: Uint32Array, i: number, hi: number, lo: number): number {
  const x = i * ENTRY_WORDS;
  return a[x]! - hi || a[x + 1]! - lo;
}

// The entries an index holds for a store's records and entities: a key line per keyed record, and per entity its
// secondary keys' values (or withdrawals of values it no longer has); and which of them a merge keeps.
/** The key line entry of a record, if its store keys it. */
export function keyEntry(list: EntryList, spec: StoreSpec<any>, record: JournalRecord, at: LinePosition): string | undefined {
  const key = spec.keyOf?.(record);
  if (key === undefined) return undefined;
  const [hi, lo] = sortKey(KEY_SPACE, key);
  const [oh, ol] = splitOffset(at.offset);
  list.push(hi, lo, oh, ol, at.length, at.line, spec.resets?.(record) ? FLAG_RESET : 0, keyCheck(key));
  return key;
}

/** The tally entry of a record (a count of one in its hour and series), if its store counts it (StoreSpec.tally). */
export function tallyEntry(list: Pick<EntryList, 'push'>, spec: StoreSpec<any>, record: JournalRecord): void {
  const series = spec.tally?.of(record);
  if (series === undefined) return;
  const hour = Math.floor(Date.parse(record.ts) / HOUR_MS);
  if (!(hour >= 0)) return;
  const [hi, lo] = sortKey(TALLY_SPACE, hour);
  list.push(hi, lo, series, 0, 1, 0);
}

/** The sort key of the store's i-th secondary name's value: a prefixed name's text in order, else sortKey. */
export function valueKey(spec: StoreSpec<any>, i: number, value: string | number): [number, number] {
  const space = 1 + i;
  return typeof value === 'string' && spec.secondary?.prefixed?.includes(spec.secondary.names[i]!) ? textKey(space, value) : sortKey(space, value);
}

/**
 * The secondary entries of one entity as it is in `state`, and withdrawals for the names it has no value of —
 * unless `withdraw` is false (a whole base, which holds no older value to withdraw: a withdrawal there sorts at
 * value 0 and would lengthen every range query from the start, as "expires by now" is).
 */
export function secondaryEntries(list: Pick<EntryList, 'push'>, spec: StoreSpec<any>, state: unknown, key: string, version: number, withdraw = true): void {
  const secondary = spec.secondary;
  if (secondary === undefined) return;
  const values = secondary.values(state, key);
  const [kh, kl] = hash56(key);
  const check = keyCheck(key);
  const [vh, vl] = splitOffset(version);
  secondary.names.forEach((_, i) => {
    const value = values[i];
    if (value === undefined) {
      if (withdraw) list.push(((1 + i) << 24) >>> 0, 0, kh, kl, vh, vl, FLAG_WITHDRAWN, check);
    } else {
      const [hi, lo] = valueKey(spec, i, value);
      list.push(hi, lo, kh, kl, vh, vl, 0, check);
    }
  });
}

/** Collects key lines during a replay, for a whole new base. */
export class KeyLines {
  readonly entries = new EntryList(1024);
  readonly keys = new Set<string>();
  constructor(private readonly spec: StoreSpec<any>) {}
  add(record: JournalRecord, at: LinePosition): string | undefined {
    tallyEntry(this.entries, this.spec, record);
    const key = keyEntry(this.entries, this.spec, record, at);
    if (key !== undefined) this.keys.add(key);
    return key;
  }
}

/** An entity's identity in a secondary entry: its key's 56-bit hash and second hash (keys may share the former). */
export const entityOf = (w: Uint32Array, x: number): string => `${w[x + 2]}:${w[x + 3]}:${w[x + 7]}`;

/** The (space, entity) of every secondary entry in `list`, with the index of its latest entry. */
export function latestSecondaries(list: EntryList): Map<string, number> {
  const latest = new Map<string, number>();
  const w = list.words;
  for (let j = 0; j < list.count; j++) {
    const x = j * ENTRY_WORDS;
    const space = w[x]! >>> 24;
    if (space === KEY_SPACE || space === TALLY_SPACE) continue;
    const id = `${space}:${entityOf(w, x)}`;
    const before = latest.get(id);
    if (before === undefined || joinOffset(w[before * ENTRY_WORDS + 4]!, w[before * ENTRY_WORDS + 5]!) <= joinOffset(w[x + 4]!, w[x + 5]!)) latest.set(id, j);
  }
  return latest;
}

/** `list` without superseded secondary entries and without withdrawals (key lines and tally counts all kept). */
export function keepLatest(list: EntryList, latest: Map<string, number>): Uint32Array {
  const kept = new EntryList(list.count);
  const w = list.words;
  for (let j = 0; j < list.count; j++) {
    const x = j * ENTRY_WORDS;
    const space = w[x]! >>> 24;
    if (space !== KEY_SPACE && space !== TALLY_SPACE && (latest.get(`${space}:${entityOf(w, x)}`) !== j || w[x + 6]! & FLAG_WITHDRAWN)) continue;
    kept.pushFrom(w, j);
  }
  return kept.view();
}
