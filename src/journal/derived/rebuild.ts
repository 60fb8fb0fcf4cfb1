// Rebuilding a store's index from its journal in bounded memory (the first read after cache/ was lost): one
// verifying scan, then one merge — instead of a replay that holds the whole state and every entry at once.
//
// The scan sorts every key line into spilled runs (spill.ts) and folds the records into a window: a state of
// a bounded number of line bytes, started afresh whenever it fills. An entity that a window folded from one
// of its resetting lines on (StoreSpec.resets) has its secondary values there when the window closes; each such
// (entity, window) is a candidate, numbered: a marker (the key and the offset of the entity's last line the window
// folded) goes to a sort by key, and its values, as the secondary entries they would be, straight to the sort of
// secondary entries (by value, then key), the candidate's number in place of the version. The merge then walks
// the key lines by key: an entity whose last line is the one a candidate was taken at has that candidate marked
// valid (a bit each); any other (its lines since its last reset span windows) is folded again from its own lines,
// read back from the journal (rebuild-refold.ts: a batch at a time, in journal order), and its entries join the
// secondary sort as valid. The entries go out as the base's partitions in sort order: the key lines first, then
// the secondary entries of valid candidates, each with the version restored.
//
// A key hashes to 56 bits in the index; its second 32-bit hash (word 7 of each key line, kept in the index)
// tells entities that share the 56 bits apart, so each gets its own values. A batch's records are folded into the
// window as they are read (ChainVerifier's `keep`), before the batch is known to be whole: a candidate taken from
// a batch that never completed names a line that is not a key line, so it is never valid.
// Damage (any problem but a torn tail) leaves no index, as a replay's would not; the caller reports the scan.
import type { JournalRecord } from '../record';
import { isDamaged, scanJournal, type LinePosition, type ScanResult } from '../scan';
import type { StoreSpec } from '../store-spec';
import { mtimeOf } from './cache-file';
import { ENTRY_WORDS, EntryList, FLAG_RESET, joinOffset, KEY_SPACE, keyCheck, sortKey, splitOffset } from './entries';
import { dropRun } from './index-base';
import { installBase, partEntries } from './index-levels';
import { bindingAt } from './index-tail';
import { PartWriter } from './part-writer';
import { SpillFailed, SpillSort, type Merged } from './spill';
import { Candidates } from './rebuild-candidates';
import { Refolds } from './rebuild-refold';

/** Line bytes a window folds before it closes (its state is about that size again); scaled down for tests. */
const windowBytes = () => (Number(process.env.CRUX_TEST_REBUILD_ENTRIES) || 0) * 64 || 512 * 1024;

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
 * Scans the journal open at `fd`, folding the entities `keys` into a new state, and writes a whole new index
 * of it unless the scan finds damage. With `needIndex`, stops as soon as the index cannot be written (the
 * caller then replays instead: only the index was wanted).
 */
export function rebuildIndex<S>(root: string, spec: StoreSpec<S>, fd: number, keys: readonly string[], needIndex: boolean): Rebuilt<S> | undefined {
  const mtime_ns = mtimeOf(fd);
  const wanted = new Set(keys);
  const state = spec.initial();
  // Sorted by their first two words (the key's hash) only: the key lines come in journal order, so a key's are
  // in the order of their offsets (words 2–3) already; a key's candidate markers are matched by their second hash
  // and offset (markValid), in whatever order they come.
  const lines = new SpillSort(root, spec.file, 2);
  const candidates = spec.secondary === undefined ? undefined : new Candidates(root, spec.file);
  let window = spec.initial();
  let resident = new Map<string, number>();
  let folded = 0;
  const maxFolded = windowBytes();
  let failed = false;
  const closeWindow = () => {
    if (candidates !== undefined) for (const [key, last] of resident) candidates.take(spec, window, key, last);
    window = spec.initial();
    resident = new Map();
    folded = 0;
  };
  // Each keyed record's key line waits in `held` until its batch is whole (the sink takes them in order).
  const held = new EntryList(1024);
  let taken = 0;
  const keep = (record: JournalRecord, at: LinePosition): Kept => {
    const key = spec.keyOf!(record);
    if (key === undefined) return KEYLESS;
    const reset = spec.resets?.(record) === true;
    if (!failed) {
      const [hi, lo] = sortKey(KEY_SPACE, key);
      const [oh, ol] = splitOffset(at.offset);
      held.push(hi, lo, oh, ol, at.length, at.line, reset ? FLAG_RESET : 0, keyCheck(key));
    }
    if (candidates !== undefined && !failed && (reset || resident.has(key))) {
      spec.evolve(window, record, at);
      resident.set(key, at.offset);
      folded += at.length;
      if (folded >= maxFolded) {
        try {
          closeWindow();
        } catch (error) {
          stop(error);
        }
      }
    }
    return wanted.has(key) ? record : KEYED;
  };
  const stop = (error: unknown) => {
    if (!(error instanceof SpillFailed)) throw error;
    failed = true;
    lines.close();
    candidates?.close();
    window = spec.initial();
    resident.clear();
    if (needIndex) throw error;
  };
  let scan: ScanResult;
  try {
    scan = scanJournal(
      fd,
      spec.vocabulary,
      (kept: Kept, at) => {
        if (kept === KEYLESS) return;
        if (kept !== KEYED) spec.evolve(state, kept, at);
        if (failed) return;
        try {
          lines.pushFrom(held.words, taken++);
        } catch (error) {
          stop(error);
        }
        if (taken === held.count) held.count = taken = 0;
      },
      undefined,
      { keep },
    );
  } catch (error) {
    if (error instanceof SpillFailed) return undefined;
    throw error;
  }
  if (failed || isDamaged(scan)) {
    lines.close();
    candidates?.close();
    return { scan, state, built: false };
  }
  const out = new PartWriter(root, spec.file, partEntries());
  let built = false;
  try {
    closeWindow();
    const version = scan.tornTail?.offset ?? scan.bytes;
    const live = mergeOut(spec, fd, lines.merged(), candidates, out, version);
    built = live !== undefined && installBase(root, spec, out.finish(), bindingAt({ ...scan, tornTail: scan.tornTail }, mtime_ns), live);
  } catch (error) {
    if (!(error instanceof SpillFailed)) throw error;
  } finally {
    lines.close();
    candidates?.close();
    if (!built) for (const run of out.parts) dropRun(root, spec.file, run.id);
  }
  return { scan, state, built };
}

/**
 * Writes the key lines (word 7: the key's second hash, as the index keeps it) to `out`, marking each entity's
 * valid candidate on the way (or folding it again), then the secondary entries of valid candidates. Returns the
 * live-bytes estimate (each entity's largest line), or undefined when a line read back does not verify (the
 * journal changed under the scan).
 */
function mergeOut<S>(spec: StoreSpec<S>, fd: number, lines: Merged, candidates: Candidates | undefined, out: PartWriter, version: number): number | undefined {
  const markers = candidates?.merged();
  const refolds = candidates === undefined ? undefined : new Refolds(spec, fd, candidates.entries);
  const group = new EntryList(16);
  const found = new EntryList(16);
  let live = 0;
  while (!lines.done) {
    const hi = lines.words[lines.index * ENTRY_WORDS]!;
    const lo = lines.words[lines.index * ENTRY_WORDS + 1]!;
    group.count = 0;
    while (!lines.done && lines.words[lines.index * ENTRY_WORDS] === hi && lines.words[lines.index * ENTRY_WORDS + 1] === lo) {
      group.pushFrom(lines.words, lines.index);
      out.push(lines.words, lines.index, lines.words[lines.index * ENTRY_WORDS + 7]!);
      lines.next();
    }
    // Most keys have one line: no grouping by second hash to do.
    const subgroups = group.count === 1 ? undefined : bySecondHash(group);
    if (subgroups === undefined) live += group.words[4]!;
    else for (const at of subgroups.values()) live += Math.max(...at.map((j) => group.words[j * ENTRY_WORDS + 4]!));
    if (candidates === undefined || markers === undefined) continue;
    found.count = 0;
    while (!markers.done && before(markers, hi, lo)) markers.next();
    while (!markers.done && markers.words[markers.index * ENTRY_WORDS] === hi && markers.words[markers.index * ENTRY_WORDS + 1] === lo) {
      found.pushFrom(markers.words, markers.index);
      markers.next();
    }
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

/** The subgroup of a group of one line. */
const FIRST: readonly number[] = [0];

const before = (m: Merged, hi: number, lo: number) => {
  const x = m.index * ENTRY_WORDS;
  return m.words[x]! < hi || (m.words[x] === hi && m.words[x + 1]! < lo);
};

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
