// Over 300 lines: the streamed rebuild with its candidates, which nothing else uses.
// Rebuilding a store's index from its journal in bounded memory (the first read after cache/ was lost): one
// verifying scan, then one merge — instead of a replay that holds the whole state and every entry at once.
//
// The scan sorts every key line into spilled runs (spill.ts) and folds the records into a window: a state of
// a bounded number of line bytes, started afresh whenever it fills. An entity that a window folded from one
// of its resetting lines on (StoreSpec.resets) has its secondary values there when the window closes; each such
// (entity, window) is a candidate, numbered: a marker (the key and the offset of the entity's last line the window
// folded) goes among the key lines, and its values, as the secondary entries they would be, straight to the sort of
// secondary entries (by value, then key), the candidate's number in place of the version. The merge then walks
// the key lines by key: an entity whose last line is the one a candidate was taken at has that candidate marked
// valid (a bit each); any other (its lines since its last reset span windows) is folded again from its own lines,
// read back from the journal (rebuild-refold.ts: a batch at a time, in journal order), and its entries join the
// secondary sort as valid. The entries go out as the base's partitions in sort order: the key lines first, then
// the secondary entries of valid candidates, each with the version restored.
//
// A key hashes to 56 bits in the index; its second 32-bit hash (word 7 of each key line, kept in the index)
// tells entities that share the 56 bits apart, so each gets its own values. A batch's records are sorted and folded
// into the window as they are read (ChainVerifier's `keep`), before the batch is known to be whole (an import of 1M
// is one batch: nothing of it waits in memory): the merge leaves out the key lines of a batch that never completed
// (the torn tail's), so a candidate taken from one names a line that is not a key line, and is never valid.
// Damage (any problem but a torn tail) leaves no index, as a replay's would not; the caller reports the scan.
import type { JournalRecord } from '../codec/record';
import { isDamaged, type LinePosition, type ScanPart, type ScanResult } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import { ENTRY_WORDS, EntryList, FLAG_RESET, hash56, joinOffset, KEY_SPACE, keyCheck, sortKey, splitOffset, valueKey } from './entries';
import { dropRun, PartWriter } from './index-base';
import { installBase, partEntries } from './index-levels';
import { bindingAt } from './cache-file';
import { SpillFailed, SpillSort, type Merged } from './spill';
import { REFOLDED, Refolds } from './rebuild-refold';
import { testHook } from '../../shared/test-hooks';
import { TallyCounter } from './tally';

/** Line bytes a window folds before it closes (its state is about that size again); scaled down for tests. */
const windowBytes = () => (Number(testHook('CRUX_TEST_REBUILD_ENTRIES')) || 0) * 64 || 512 * 1024;

export interface Rebuilt<S> {
  readonly scan: ScanResult;
  /** The entities asked for, folded from every record of theirs the scan verified. */
  readonly state: S;
  /** Whether a whole new index was written (not over damage, nor when cache/ could not take it). */
  readonly built: boolean;
}

/** What a scan keeps of a record until its batch is whole: whether it has a key, and the record of a key asked for. */
const KEYLESS = Symbol('keyless');
const KEYED = Symbol('keyed');
type Kept = typeof KEYLESS | typeof KEYED | JournalRecord;

/**
 * The index's part of a verifying scan (ScanPart): folds the entities `keys` into a new state and gathers what a
 * whole new index of the journal needs; `finish` writes it unless the scan found damage. With `needIndex`, a
 * spill that fails throws SpillFailed out of the scan (the caller then replays instead: only the index was
 * wanted); without, the index is given up and the scan goes on for the state.
 */
export class IndexRebuild<S> implements ScanPart<Kept> {
  readonly state: S;
  private readonly wanted: Set<string>;
  // Sorted by their first two words (the key's hash) only: the key lines come in journal order, so a key's are
  // in the order of their offsets (words 2–3) already; a key's candidate markers are matched by their second hash
  // and offset (markValid), in whatever order they come.
  private readonly lines: SpillSort;
  private readonly candidates: Candidates | undefined;
  private window: S;
  private resident = new Map<string, number>();
  private folded = 0;
  private readonly maxFolded = windowBytes();
  private failed = false;
  private readonly tally: TallyCounter | undefined;

  constructor(
    private readonly root: string,
    private readonly spec: StoreSpec<S>,
    keys: readonly string[],
    private readonly needIndex: boolean,
  ) {
    this.wanted = new Set(keys);
    this.state = spec.initial();
    this.window = spec.initial();
    this.lines = new SpillSort(root, spec.file, 2);
    this.candidates = spec.secondary === undefined ? undefined : new Candidates(root, spec.file, this.lines);
    this.tally = spec.tally === undefined ? undefined : new TallyCounter(spec);
  }

  keep(record: JournalRecord, at: LinePosition): Kept {
    const { spec } = this;
    this.tally?.add(record, at.offset);
    const key = spec.keyOf!(record);
    if (key === undefined) return KEYLESS;
    const reset = spec.resets?.(record) === true;
    if (!this.failed) {
      // Sorted as it is read, before its batch is known whole: the merge leaves out the lines of a batch that
      // never completed (at or past the torn tail; one broken anywhere else is damage, and nothing is built).
      const [hi, lo] = sortKey(KEY_SPACE, key);
      const [oh, ol] = splitOffset(at.offset);
      try {
        this.lines.push(hi, lo, oh, ol, at.length, at.line, reset ? FLAG_RESET : 0, keyCheck(key));
      } catch (error) {
        this.stop(error);
      }
    }
    if (this.candidates !== undefined && !this.failed && (reset || this.resident.has(key))) {
      spec.evolve(this.window, record, at);
      this.resident.set(key, at.offset);
      this.folded += at.length;
      if (this.folded >= this.maxFolded) {
        try {
          this.closeWindow();
        } catch (error) {
          this.stop(error);
        }
      }
    }
    return this.wanted.has(key) ? record : KEYED;
  }

  take(kept: Kept, at: LinePosition): void {
    if (kept !== KEYLESS && kept !== KEYED) this.spec.evolve(this.state, kept, at);
  }

  /** Whether `take` does anything: only for the entities asked for (a scan need not hold what keep made otherwise). */
  get takes(): boolean {
    return this.wanted.size > 0;
  }

  /** Whether `take` passes over this item: all but the records of the entities asked for. */
  idle(kept: Kept): boolean {
    return kept === KEYLESS || kept === KEYED;
  }

  /** After the scan: writes the new index (not over damage). Whether it was installed. */
  finish(fd: number, scan: ScanResult, mtime_ns: string): boolean {
    if (this.failed || isDamaged(scan)) {
      this.close();
      return false;
    }
    const { root, spec } = this;
    const out = new PartWriter(root, spec.file, partEntries());
    let built = false;
    try {
      this.closeWindow();
      const version = scan.tornTail?.offset ?? scan.bytes;
      const live = mergeOut(spec, fd, this.lines.merged(), this.candidates, out, version);
      // The tally's space sorts after every other.
      if (live !== undefined) this.tally?.push(version, out);
      built = live !== undefined && installBase(root, spec, out.finish(), bindingAt({ ...scan, tornTail: scan.tornTail }, mtime_ns), live);
    } catch (error) {
      if (!(error instanceof SpillFailed)) throw error;
    } finally {
      this.close();
      if (!built) for (const run of out.parts) dropRun(root, spec.file, run.id);
    }
    return built;
  }

  /** Lets go of the sorts' scratch files (after finish, or when the scan is given up). */
  close(): void {
    this.lines.close();
    this.candidates?.close();
  }

  private closeWindow(): void {
    if (this.candidates !== undefined) for (const [key, last] of this.resident) this.candidates.take(this.spec, this.window, key, last);
    this.window = this.spec.initial();
    this.resident = new Map();
    this.folded = 0;
  }

  private stop(error: unknown): void {
    if (!(error instanceof SpillFailed)) throw error;
    this.failed = true;
    this.close();
    this.window = this.spec.initial();
    this.resident.clear();
    if (this.needIndex) throw error;
  }
}

/**
 * Writes the key lines before `version` (word 7: the key's second hash, as the index keeps it) to `out`, marking each entity's
 * valid candidate on the way (or folding it again), then the secondary entries of valid candidates. Returns the
 * live-bytes estimate (each entity's largest line), or undefined when a line read back does not verify (the
 * journal changed under the scan).
 */
function mergeOut<S>(spec: StoreSpec<S>, fd: number, lines: Merged, candidates: Candidates | undefined, out: PartWriter, version: number): number | undefined {
  candidates?.scanned();
  const refolds = candidates === undefined ? undefined : new Refolds(spec, fd, candidates.entries);
  const group = new EntryList(16);
  const found = new EntryList(16);
  let live = 0;
  while (!lines.done) {
    const hi = lines.words[lines.index * ENTRY_WORDS]!;
    const lo = lines.words[lines.index * ENTRY_WORDS + 1]!;
    group.count = found.count = 0;
    while (!lines.done && lines.words[lines.index * ENTRY_WORDS] === hi && lines.words[lines.index * ENTRY_WORDS + 1] === lo) {
      // A candidate's marker (its key's, among its lines); a line of the batch the torn tail left is not the
      // journal's (no index entry, nor a part of its entity).
      if (lines.words[lines.index * ENTRY_WORDS + 6]! & FLAG_MARKER) found.pushFrom(lines.words, lines.index);
      else if (offsetOf(lines.words, lines.index) < version) {
        group.pushFrom(lines.words, lines.index);
        out.push(lines.words, lines.index, lines.words[lines.index * ENTRY_WORDS + 7]!);
      }
      lines.next();
    }
    if (group.count === 0) continue;
    // Most keys have one line: no grouping by second hash to do.
    const subgroups = group.count === 1 ? undefined : bySecondHash(group);
    if (subgroups === undefined) live += group.words[4]!;
    else for (const at of subgroups.values()) live += Math.max(...at.map((j) => group.words[j * ENTRY_WORDS + 4]!));
    if (candidates === undefined) continue;
    for (const [h2, at] of subgroups ?? [[group.words[7]!, FIRST] as const]) {
      if (!candidates.markValid(found, h2, offsetOf(group.words, at.at(-1)!)) && !refolds!.add(group, at)) return undefined;
    }
  }
  if (refolds !== undefined && !refolds.flush()) return undefined;
  const [vh, vl] = splitOffset(version);
  for (const m = candidates?.entries.merged(); m !== undefined && !m.done; m.next()) {
    const x = m.index * ENTRY_WORDS;
    const w = m.words;
    if (candidates!.isValid(w[x + 4]!)) out.pushWords(w[x]!, w[x + 1]!, w[x + 2]!, w[x + 3]!, vh, vl, 0, w[x + 7]!);
  }
  return live;
}

/** Word 6 of a candidate's marker among the key lines (a key line's flags are FLAG_RESET or none). */
const FLAG_MARKER = 4;

/** The subgroup of a group of one line. */
const FIRST: readonly number[] = [0];

/** The group's entries (their indexes, in journal order) by the second hash of their key. */
function bySecondHash(group: EntryList): Map<number, number[]> {
  const by = new Map<number, number[]>();
  for (let j = 0; j < group.count; j++) {
    const h2 = group.words[j * ENTRY_WORDS + 7]!;
    const at = by.get(h2);
    if (at === undefined) by.set(h2, [j]);
    else at.push(j);
  }
  return by;
}

const offsetOf = (w: Uint32Array, j: number) => joinOffset(w[j * ENTRY_WORDS + 2]!, w[j * ENTRY_WORDS + 3]!);

// The candidates: each (entity, window) whose state the window folded from the entity's last resetting line on,
// numbered. Its marker (the key's hashes, the offset of the entity's last line the window folded, its number) goes
// to the sort of key lines (FLAG_MARKER tells it from them), and its values, as the secondary entries they would be, straight to the sort by value and key,
// its number in place of the version (words 4–5). The merge marks valid the one candidate taken at each entity's
// last line (a bit each); only valid candidates' entries go out.
class Candidates {
  /** Secondary entries by value, then key; word 4 is the candidate's number. */
  readonly entries: SpillSort;
  private count = 0;
  private valid = new Uint8Array(0);

  constructor(
    root: string,
    file: string,
    private readonly markers: SpillSort,
  ) {
    this.entries = new SpillSort(root, file, 4);
  }

  /** The entity `key` as the window folded it, its last line there at `last`: its marker and its values' entries. */
  take<S>(spec: StoreSpec<S>, window: S, key: string, last: number): void {
    const [kh, kl] = hash56(key);
    const h2 = keyCheck(key);
    const [oh, ol] = splitOffset(last);
    const candidate = this.count++;
    this.markers.push(kh, kl, h2, candidate, oh, ol, FLAG_MARKER, 0);
    const values = spec.secondary!.values(window, key);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === undefined) continue;
      const [vh, vl] = valueKey(spec, i, value);
      this.entries.push(vh, vl, kh, kl, candidate, 0, 0, h2);
    }
  }

  /** Call once, when the scan is done: every candidate is numbered. */
  scanned(): void {
    this.valid = new Uint8Array((this.count >>> 3) + 1);
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
      taken = w[j * ENTRY_WORDS + 3]!;
    }
    if (taken === -1) return false;
    this.valid[taken >>> 3]! |= 1 << (taken & 7);
    return true;
  }

  isValid(candidate: number): boolean {
    return candidate === REFOLDED || (this.valid[candidate >>> 3]! & (1 << (candidate & 7))) !== 0;
  }

  close(): void {
    this.entries.close();
  }
}
