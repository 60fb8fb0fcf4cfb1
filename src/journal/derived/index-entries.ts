// The entries an index holds for a store's records and entities: a key line per keyed record, and per entity
// its secondary keys' values (or withdrawals of values it no longer has); and which of them a merge keeps.
import type { JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import { ENTRY_WORDS, EntryList, FLAG_RESET, FLAG_WITHDRAWN, hash56, joinOffset, KEY_SPACE, keyCheck, sortKey, splitOffset, textKey } from './entries';

/** The key line entry of a record, if its store keys it. */
export function keyEntry(list: EntryList, spec: StoreSpec<any>, record: JournalRecord, at: LinePosition): string | undefined {
  const key = spec.keyOf?.(record);
  if (key === undefined) return undefined;
  const [hi, lo] = sortKey(KEY_SPACE, key);
  const [oh, ol] = splitOffset(at.offset);
  list.push(hi, lo, oh, ol, at.length, at.line, spec.resets?.(record) ? FLAG_RESET : 0, keyCheck(key));
  return key;
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
    if (space === KEY_SPACE) continue;
    const id = `${space}:${entityOf(w, x)}`;
    const before = latest.get(id);
    if (before === undefined || joinOffset(w[before * ENTRY_WORDS + 4]!, w[before * ENTRY_WORDS + 5]!) <= joinOffset(w[x + 4]!, w[x + 5]!)) latest.set(id, j);
  }
  return latest;
}

/** `list` without superseded secondary entries and without withdrawals. */
export function keepLatest(list: EntryList, latest: Map<string, number>): Uint32Array {
  const kept = new EntryList(list.count);
  const w = list.words;
  for (let j = 0; j < list.count; j++) {
    const x = j * ENTRY_WORDS;
    const space = w[x]! >>> 24;
    if (space !== KEY_SPACE && (latest.get(`${space}:${entityOf(w, x)}`) !== j || w[x + 6]! & FLAG_WITHDRAWN)) continue;
    kept.pushFrom(w, j);
  }
  return kept.view();
}
