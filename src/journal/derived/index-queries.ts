// Reads of one store's index by the value of a secondary key: every candidate for an equality or an upper bound,
// the newest entities of an ordered key until the caller has enough, and the entities of a prefixed key by
// their values' leading bytes. Each merges the log's and the journal tail's entries with the runs', and folds
// the entities it finds through their own lines (index-lookup.ts).
import { expectHashUnits } from '../../shared/sha256';
import type { IndexQuery, NewestQuery } from '../codec/store-spec';
import { compareAt, entityOf, ENTRY_WORDS, EntryList, FLAG_WITHDRAWN, hash56, keptUnits, sortKey, textRange, valueKey } from './entries';
import { readsWhole, RunMissing } from './index-levels';
import { IndexLookup } from './index-lookup';
import { NewestOutOfStep, newestInRange, type Newest } from './index-newest';
import { DerivedDamage } from './sorted-table';

/** Entities a limited read folds between two looks at whether it has enough (loadNewest). */
const BATCH = 16;
/** A tie group (entities of one value) longer than this is read only after a look at whether it is needed (loadNewest). */
const TIE_READS = 16;
/** A tie group read by key (SecondaryKeys.tied) of up to this many entities is known from the index as a whole (loadNewest). */
const TIED_SET = 4096;
/**
 * About the fewest UTF-16 units a record line has (a session's or a case's, its hash and chain fields ~150): a read that
 * will verify n lines tells the hashing beforehand it hashes about n times this (shared/sha256.ts: many lines are
 * hashed by node:crypto, loaded at once; a few by @noble/hashes).
 */
const LINE_UNITS = 256;

/** Entities of one tie group a read by prefix folds before it asks the spec for a deeper read that orders them. */
const GROUP_READS = 32;
/** Deeper reads within a deeper read, at most (each knows more of the values: a bound, not a need). */
const MAX_DEPTH = 8;

/** Reads by a secondary key's value, over an open index's lookups. */
export abstract class IndexQueries<S> extends IndexLookup<S> {
  /**
   * Folds into `state` every entity that may match `query` — every one that does, and some that no longer
   * do (the caller filters exactly); false when a line does not verify.
   */
  loadCandidates(state: S, query: IndexQuery): boolean {
    const secondary = this.spec.secondary;
    const i = secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0) throw new Error(`${this.spec.file}: no secondary key ${query.index}`);
    const space = 1 + i;
    const [fromHi, fromLo] = 'equals' in query ? valueKey(this.spec, i, query.equals) : [(space << 24) >>> 0, 0];
    const [toHi, toLo] = 'equals' in query ? [fromHi, fromLo] : sortKey(space, query.atMost);
    const hashes = new Map<string, [number, number]>();
    const take = (w: Uint32Array, j: number) => {
      const at = j * ENTRY_WORDS;
      if (w[at + 6]! & FLAG_WITHDRAWN) return;
      hashes.set(`${w[at + 2]}:${w[at + 3]}`, [w[at + 2]!, w[at + 3]!]);
    };
    if (!readsWhole(() => this.tables.range(fromHi, fromLo, toHi, toLo, take))) return false;
    const log = this.log?.entries;
    if (log !== undefined) {
      for (let j = 0; j < log.count; j++) {
        const w = log.words;
        const a = w[j * ENTRY_WORDS]!,
          b = w[j * ENTRY_WORDS + 1]!;
        if ((a > fromHi || (a === fromHi && b >= fromLo)) && (a < toHi || (a === toHi && b <= toLo))) take(w, j);
      }
    }
    // Entities written past the index have no secondary entries yet: each is a candidate.
    for (const key of this.tail.keys) {
      const [hi, lo] = hash56(key);
      hashes.set(`${hi}:${lo}`, [hi, lo]);
    }
    expectHashUnits(hashes.size * LINE_UNITS);
    for (const [hi, lo] of hashes.values()) {
      if (!this.foldHash(state, ((0 << 24) | hi) >>> 0, lo, undefined)) return false;
    }
    return true;
  }

  /**
   * Folds into `state` the entities whose value of the ordered key `query.index` is at most `query.atMost` (and
   * at least `query.atLeast`, when given), highest value first, until `enough(state)`. Returns how many entities are in that range (`total`: unless
   * `query.count` is false, which reads only the pages of the entities folded), or undefined after damage.
   */
  loadNewest(state: S, query: NewestQuery, enough: (state: S) => boolean): { total: number | undefined } | undefined {
    const i = this.spec.secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0) throw new Error(`${this.spec.file}: no secondary key ${query.index}`);
    // Entities written past the index take their places by value, as if indexed (their values as their own lines
    // fold them now), never first: a tail of earlier times (a restored cache/, another host's clock) read first
    // pushed newer entities out of a limited list.
    const written = this.writtenSince();
    if (written === undefined) return undefined;
    let newest: Newest;
    try {
      newest = newestInRange(this.tables, written, 1 + i, query.atMost, { count: query.count, atLeast: query.atLeast });
      // A tie group at a time, whole (a candidate may no longer match: the caller's exact filter says so): the
      // caller orders equals by their keys, which the index does not keep (it orders them by key hash), so a
      // read that stopped inside a group could leave out one the caller shows before those it read. enough() is
      // asked between groups, once BATCH entities are folded since it last was, and before a group longer than
      // TIE_READS (an import that gave thousands one time), which is then read only when the answer reaches it —
      // in key order through the spec's read by prefix (SecondaryKeys.tied) as far as enough(), where there is one.
      let next = newest.next();
      if (next !== undefined) expectHashUnits(Math.min(newest.total ?? BATCH, BATCH) * LINE_UNITS);
      let folded = BATCH;
      while (next !== undefined) {
        const value = next[2];
        const group = [next];
        for (next = newest.next(); next !== undefined && next[2] === value && group.length <= TIE_READS; next = newest.next()) group.push(next);
        if (folded >= BATCH || group.length > TIE_READS) {
          if (enough(state)) break;
          folded = 0;
        }
        const tied = group.length > TIE_READS ? this.spec.secondary?.tied?.(query.index, value) : undefined;
        if (tied !== undefined) {
          // Folded in the caller's order (by key, through the spec's read by prefix) only as far as enough(): the
          // group's other entities sort after them. A group of up to TIED_SET entities is known from the index, and
          // a candidate outside it is passed over unread; in a larger one (an import's hundred thousand, not kept
          // per member) a candidate is a member when its own lines give it the group's value.
          for (; next !== undefined && next[2] === value && group.length <= TIED_SET; next = newest.next()) group.push(next);
          const whole = next === undefined || next[2] !== value;
          const known = whole ? new Set(group.map(([hi, lo]) => `${hi >>> 0}:${lo >>> 0}`)) : undefined;
          const taken = new Set<string>();
          const admit = (hi: number, lo: number): boolean | undefined => {
            const id = `${hi}:${lo}`;
            if (known !== undefined) {
              if (!known.has(id)) return false;
            } else {
              const scratch = this.spec.initial();
              const keys: string[] = [];
              if (!this.foldHash(scratch, hi, lo, undefined, keys)) return undefined;
              if (!keys.some((key) => this.spec.secondary!.values(scratch, key)[i] === value)) return false;
            }
            taken.add(id);
            return true;
          };
          const read = this.prefixRead(state, tied, enough, 0, admit);
          if (read === 'failed') return undefined;
          if (read === 'enough') break;
          // Read to its end: any member it did not hold (none, when the spec's values agree) is folded too.
          const rest = (hi: number, lo: number) => taken.has(`${hi >>> 0}:${lo >>> 0}`) || this.foldHash(state, hi >>> 0, lo, undefined);
          for (const [hi, lo] of group) if (!rest(hi, lo)) return undefined;
          for (; next !== undefined && next[2] === value; next = newest.next()) if (!rest(next[0], next[1])) return undefined;
          folded += taken.size;
          continue;
        }
        for (const [hi, lo] of group) if (!this.foldHash(state, hi >>> 0, lo, undefined)) return undefined;
        folded += group.length;
        for (; next !== undefined && next[2] === value; next = newest.next(), folded++) {
          if (!this.foldHash(state, next[0] >>> 0, next[1], undefined)) return undefined;
        }
      }
    } catch (error) {
      // A page (read while counting, or on demand) that does not verify, or an index out of step with its
      // runs: dropped and rebuilt.
      if ((error instanceof DerivedDamage && !(error instanceof RunMissing)) || error instanceof NewestOutOfStep) return undefined;
      throw error;
    }
    return { total: newest.total };
  }

  /**
   * Folds into `state` the entities whose value of the prefixed key `query.index` starts with `query.prefix`,
   * in the order of the values' leading bytes (those written past the index in their places too), a tie group
   * (entities whose values share those bytes) at a time, until `enough(state)` — so that an entity left out
   * sorts after every one read. A tie group of more than GROUP_READS entities (a short prefix of ids that share
   * a long stem) is read in order through the spec's deeper read (SecondaryKeys.deeper), as far as `enough`,
   * instead of all of it. Candidates come from every entry in the range: an entity's prefixed value is its
   * own, and a stale candidate (deleted since) costs a read, never an answer (the caller filters exactly).
   * False after damage.
   */
  loadPrefix(state: S, query: { index: string; prefix: string }, enough: (state: S) => boolean): boolean {
    return this.prefixRead(state, query, enough, 0, undefined) !== 'failed';
  }

  /**
   * loadPrefix's read: 'enough' when it stopped because enough(state) said so, 'done' at the range's end. `admit`:
   * whether a candidate (its key hash) is folded (a tie group's member: loadNewest), undefined when its lines do not
   * verify; the others in the range are passed over.
   */
  private prefixRead(
    state: S,
    query: { index: string; prefix: string },
    enough: (state: S) => boolean,
    depth: number,
    admit: ((hi: number, lo: number) => boolean | undefined) | undefined,
  ): 'failed' | 'enough' | 'done' {
    const secondary = this.spec.secondary;
    const i = secondary?.names.indexOf(query.index) ?? -1;
    if (i < 0 || !secondary?.prefixed?.includes(query.index)) throw new Error(`${this.spec.file}: no prefixed secondary key ${query.index}`);
    const [fromHi, fromLo, toHi, toLo] = textRange(1 + i, query.prefix);
    const written = this.writtenSince();
    if (written === undefined) return 'failed';
    const seen = new Set<string>();
    const inRange = (w: Uint32Array, x: number) =>
      !(w[x + 6]! & FLAG_WITHDRAWN) && (w[x]! > fromHi || (w[x] === fromHi && w[x + 1]! >= fromLo)) && (w[x]! < toHi || (w[x] === toHi && w[x + 1]! <= toLo));
    // The frozen runs', the log's and the tail's entries in the range (few), in order, merged into the partitions' as they come.
    const extra = new EntryList(64);
    const frozen = () => {
      for (const run of this.tables.manifest.frozen) this.tables.table(run).range(fromHi, fromLo, toHi, toLo, (w, j) => extra.pushFrom(w, j));
    };
    if (!readsWhole(frozen)) return 'failed';
    for (let j = 0; j < written.count; j++) if (inRange(written.words, j * ENTRY_WORDS)) extra.pushFrom(written.words, j);
    const sorted = extra.sorted();
    let e = 0;
    let failed = false;
    // The tie group being read: its sort key, its entities' hashes (folded when it ends), and whether it went deeper.
    let group: [number, number] | undefined;
    let members: number[] = [];
    let deep: 'no' | 'read' | 'none' = 'no';
    let read = 0;
    let asked = 0;
    const fail = () => {
      failed = true;
      return true;
    };
    // Folds the group that ends (unless read deeper); true when the read is done. enough() is asked every 16
    // reads, between groups (it may cost what the caller's filter costs).
    const endGroup = (): boolean => {
      if (deep !== 'read') for (let m = 0; m < members.length; m += 2) if (!this.foldHash(state, members[m]!, members[m + 1]!, undefined)) return fail();
      read += deep === 'read' ? 0 : members.length / 2;
      members = [];
      deep = 'no';
      if (read - asked < 16) return false;
      asked = read;
      return enough(state);
    };
    // A group past GROUP_READS: one member's value says which deeper read orders the group (none: read it all).
    const goDeeper = (): boolean => {
      const deeper = secondary.deeper;
      if (deeper === undefined || depth >= MAX_DEPTH) return (deep = 'none') && false;
      const scratch = this.spec.initial();
      const keys: string[] = [];
      if (!this.foldHash(scratch, members[0]!, members[1]!, undefined, keys)) return fail();
      for (const key of keys) {
        const value = secondary.values(scratch, key)[i];
        const known = typeof value === 'string' ? keptUnits(value) : undefined;
        const next = value === undefined || known === undefined || known >= (value as string).length ? undefined : deeper(query.index, key, known);
        if (next === undefined) continue;
        deep = 'read';
        if (this.prefixRead(state, next, enough, depth + 1, admit) === 'failed') return fail();
        asked = read;
        return enough(state);
      }
      deep = 'none';
      return false;
    };
    // One candidate, in order; true when the read is done.
    const offer = (w: Uint32Array, j: number): boolean => {
      const x = j * ENTRY_WORDS;
      if (w[x + 6]! & FLAG_WITHDRAWN) return false;
      if (group === undefined || w[x] !== group[0] || w[x + 1] !== group[1]) {
        if (group !== undefined && endGroup()) return true;
        group = [w[x]!, w[x + 1]!];
      }
      if (deep === 'read') return false;
      const id = entityOf(w, x);
      if (seen.has(id)) return false;
      seen.add(id);
      if (admit !== undefined) {
        const member = admit(w[x + 2]!, w[x + 3]!);
        if (member === undefined) return fail();
        if (!member) return false;
      }
      members.push(w[x + 2]!, w[x + 3]!);
      return deep === 'no' && members.length > 2 * GROUP_READS && goDeeper();
    };
    let done = false;
    const spans = () =>
      (done = this.tables.partSpans(fromHi, fromLo, toHi, toLo, (w, start, end) => {
        for (let j = start; j < end; j++) {
          while (e < sorted.length / ENTRY_WORDS && compareAt(sorted, e, w, j) < 0) if (offer(sorted, e++)) return true;
          if (offer(w, j)) return true;
        }
        return false;
      }));
    if (!readsWhole(spans)) return 'failed';
    while (!done && e < sorted.length / ENTRY_WORDS) done = offer(sorted, e++);
    if (!done && !failed) endGroup();
    return failed ? 'failed' : done ? 'enough' : 'done';
  }
}
