// The candidates of a streamed index rebuild (rebuild.ts): each (entity, window) whose state the window folded from
// the entity's last resetting line on, numbered. Its marker (the key's hashes, the offset of the entity's last line
// the window folded, its number) goes to a sort by key, and its values, as the secondary entries they would be,
// straight to the sort by value and key, its number in place of the version (words 4–5). The merge marks valid
// the one candidate taken at each entity's last line (a bit each); only valid candidates' entries go out.
import type { StoreSpec } from '../codec/store-spec';
import { ENTRY_WORDS, type EntryList, hash56, keyCheck, splitOffset } from './entries';
import { valueKey } from './index-entries';
import { type Merged, SpillSort } from './spill';

/** A candidate that is valid whatever the markers say: an entity folded again by the merge. */
export const REFOLDED = 0xffffffff;

export class Candidates {
  private readonly markers: SpillSort;
  /** Secondary entries by value, then key; word 4 is the candidate's number. */
  readonly entries: SpillSort;
  private count = 0;
  private valid = new Uint8Array(0);

  constructor(root: string, file: string) {
    this.markers = new SpillSort(root, file, 2);
    this.entries = new SpillSort(root, file, 4);
  }

  /** The entity `key` as the window folded it, its last line there at `last`: its marker and its values' entries. */
  take<S>(spec: StoreSpec<S>, window: S, key: string, last: number): void {
    const [kh, kl] = hash56(key);
    const h2 = keyCheck(key);
    const [oh, ol] = splitOffset(last);
    const candidate = this.count++;
    this.markers.push(kh, kl, h2, 0, oh, ol, candidate, 0);
    const values = spec.secondary!.values(window, key);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === undefined) continue;
      const [vh, vl] = valueKey(spec, i, value);
      this.entries.push(vh, vl, kh, kl, candidate, 0, 0, h2);
    }
  }

  /** The markers in key order; call once, when the scan is done. */
  merged(): Merged {
    this.valid = new Uint8Array((this.count >>> 3) + 1);
    return this.markers.merged();
  }

  /**
   * Marks valid the one candidate among `markers` (those of one key hash) of the entity with second hash `h2` taken at
   * its last line, at `last`; false when there is not exactly one (the entity is folded again).
   */
  markValid(markers: EntryList, h2: number, last: number): boolean {
    const [oh, ol] = splitOffset(last);
    const w = markers.words;
    let taken = -1;
    for (let j = 0; j < markers.count; j++) {
      if (w[j * ENTRY_WORDS + 2] !== h2 || w[j * ENTRY_WORDS + 4] !== oh || w[j * ENTRY_WORDS + 5] !== ol) continue;
      if (taken !== -1) return false;
      taken = w[j * ENTRY_WORDS + 6]!;
    }
    if (taken === -1) return false;
    this.valid[taken >>> 3]! |= 1 << (taken & 7);
    return true;
  }

  isValid(candidate: number): boolean {
    return candidate === REFOLDED || (this.valid[candidate >>> 3]! & (1 << (candidate & 7))) !== 0;
  }

  close(): void {
    this.markers.close();
    this.entries.close();
  }
}
