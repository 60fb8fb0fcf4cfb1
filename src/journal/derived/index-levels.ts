// The index base in levels: lookups over its partitions and frozen runs, and how it grows in bounded steps.
// A write adds a block to the index file's log (block-log.ts); a full log is frozen into a sorted run of its own
// (cost: the log);
// then each write merges the oldest frozen run into at most MERGE_BUDGET entries' worth of partitions
// (splitting any that grew past PART_ENTRIES), so no single write rewrites the whole base, whatever its size.
//
// While a frozen run merges, its first `cursor` partitions already hold its entries: a lookup reads them
// there, and reads the frozen run only past the first entry of partition `cursor`. Merging drops an entity's
// secondary entries that the frozen run supersedes (it is newer than every partition), and the frozen run's
// own superseded entries and withdrawals; partitions not merged yet may still hold an older value, which
// only adds a candidate that the caller's exact filter removes.
import { fs } from '../../shared/fs';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalBinding } from './cache-file';
import { compareAt, entityOf, ENTRY_WORDS, EntryList, keepLatest, KEY_SPACE, latestSecondaries, secondaryEntries } from './entries';
import { dropIndexFiles, dropRun, oldLogName, openRun, PartWriter, strayRuns, writeManifest, writeRun } from './index-base';
import type { FrozenRef, Manifest, RunRef } from './index-base';
import { SpillFailed } from './spill';
import type { BlockMeta } from './block-log';
import { DerivedDamage, type SortedTable } from './sorted-table';
import { dropCacheFile } from './cache-file';
import { testHook } from '../../shared/test-hooks';
import { combineTally } from './tally';

/** A partition holds about this many entries (2 MiB); a merge splits one that grew past twice that. */
const PART_ENTRIES = 65536;
/** Entries of partitions one write merges a frozen run into, at most (one partition: ~2 MiB read and written). */
const MERGE_BUDGET = PART_ENTRIES;
/**
 * CRUX_TEST_INDEX_LOG_ENTRIES scales these down with the log, so that tests freeze, merge and split often;
 * CRUX_TEST_INDEX_PART_ENTRIES sets the partition size alone (to time a full-size merge step sooner).
 */
const testScale = () => Number(testHook('CRUX_TEST_INDEX_LOG_ENTRIES')) || 0;
export const partEntries = () => Number(testHook('CRUX_TEST_INDEX_PART_ENTRIES')) || (testScale() > 0 ? testScale() * 2 : PART_ENTRIES);
const mergeBudget = () => (partEntries() === PART_ENTRIES ? MERGE_BUDGET : partEntries() * 2);

/** Compares entry i of `w` with a run's first entry (sort words 0–3). */
function compareFirst(w: Uint32Array, i: number, first: readonly number[]): number {
  const x = i * ENTRY_WORDS;
  for (let k = 0; k < 4; k++) {
    const d = w[x + k]! - first[k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** A run the manifest names is gone (a writer's merge replaced it after this reader opened the manifest): reopen. */
export class RunMissing extends DerivedDamage {}

/** Runs `read`: false when a page it read does not verify (a run gone missing is thrown on: the caller reads again). */
export function readsWhole(read: () => unknown): boolean {
  try {
    read();
    return true;
  } catch (error) {
    if (error instanceof DerivedDamage && !(error instanceof RunMissing)) return false;
    throw error;
  }
}

/** The runs of one manifest, opened on first use. Every read may throw DerivedDamage (a run missing or damaged). */
export class IndexTables {
  private readonly open = new Map<string, { table: SortedTable; fd: number }>();

  constructor(
    private readonly root: string,
    private readonly file: string,
    readonly manifest: Manifest,
  ) {}

  table(ref: RunRef): SortedTable {
    let run = this.open.get(ref.id);
    if (run === undefined) {
      run = openRun(this.root, this.file, ref);
      if (run === undefined) throw new RunMissing(`index run ${ref.id} is missing or not the one named`);
      // A partition's keys lie from its first to the next one's first: a lookup's probes start there.
      const parts = this.manifest.parts;
      const p = parts.indexOf(ref as RunRef);
      if (p >= 0) run.table.bound(ref.first, parts[p + 1]?.first);
      this.open.set(ref.id, run);
    }
    return run.table;
  }

  /**
   * Every entry whose sort key lies in [from, to], from the partitions and the frozen runs (unordered), or
   * only from the one or the other.
   */
  range(
    fromHi: number,
    fromLo: number,
    toHi: number,
    toLo: number,
    visit: (words: Uint32Array, index: number) => void,
    which: 'all' | 'parts' | 'frozen' = 'all',
  ): void {
    const { parts, frozen } = this.manifest;
    if (which !== 'frozen') for (const part of this.partsOver(fromHi, fromLo, toHi, toLo)) this.table(part).range(fromHi, fromLo, toHi, toLo, visit);
    for (const [i, run] of frozen.entries()) {
      if (which === 'parts') break;
      const merged = i === 0 && run.cursor > 0 ? (run.cursor < parts.length ? parts[run.cursor]!.first : undefined) : null;
      if (merged === undefined) continue;
      this.table(run).range(fromHi, fromLo, toHi, toLo, (w, j) => {
        // Entries before partition `cursor`'s first are in the partitions already.
        if (merged !== null && compareFirst(w, j, merged) < 0) return;
        visit(w, j);
      });
    }
  }

  /**
   * The partitions' entries whose sort key lies in [from, to], in order, as spans of pages (SortedTable.spans);
   * true when a visit stopped the read.
   */
  partSpans(fromHi: number, fromLo: number, toHi: number, toLo: number, visit: (words: Uint32Array, start: number, end: number) => boolean | void): boolean {
    for (const part of this.partsOver(fromHi, fromLo, toHi, toLo)) if (this.table(part).spans(fromHi, fromLo, toHi, toLo, visit)) return true;
    return false;
  }

  /** The partitions' entries whose sort key lies in [from, to], highest first, as spans of pages (SortedTable.spansDown). */
  *partSpansDown(fromHi: number, fromLo: number, toHi: number, toLo: number): Generator<readonly [words: Uint32Array, start: number, end: number]> {
    for (const part of this.partsOver(fromHi, fromLo, toHi, toLo).reverse()) yield* this.table(part).spansDown(fromHi, fromLo, toHi, toLo);
  }

  /** The partitions that may hold sort keys in [from, to], in order. */
  private partsOver(fromHi: number, fromLo: number, toHi: number, toLo: number): RunRef[] {
    const parts = this.manifest.parts;
    const over: RunRef[] = [];
    for (let p = 0; p < parts.length; p++) {
      const first = parts[p]!.first;
      const next = parts[p + 1]?.first;
      // Partition p holds [first, next's first): skip it when the range ends before it or starts after it.
      if (p > 0 && first.length === 4 && (first[0]! > toHi || (first[0] === toHi && first[1]! > toLo))) break;
      if (next !== undefined && next.length === 4 && (next[0]! < fromHi || (next[0] === fromHi && next[1]! < fromLo))) continue;
      over.push(parts[p]!);
    }
    return over;
  }

  close(): void {
    for (const run of this.open.values()) {
      fs.closeSync(run.fd);
    }
    this.open.clear();
  }
}

/** Splits sorted entries into runs of about PART_ENTRIES, even in size; undefined when one could not be written. */
function writeParts(root: string, file: string, entries: Uint32Array): RunRef[] | undefined {
  // Summed first: a split never parts two counts of one hour and series.
  const sorted = combineTally(entries);
  const count = sorted.length / ENTRY_WORDS;
  const out = new PartWriter(root, file, Math.ceil(count / Math.max(1, Math.ceil(count / partEntries()))) || 1);
  try {
    for (let i = 0; i < count; i++) out.push(sorted, i);
    return out.finish();
  } catch (error) {
    if (error instanceof SpillFailed) return undefined;
    throw error;
  }
}

/** A whole new base from sorted entries (a replay's): partitions only. False when not written. */
function writeWholeBase(root: string, spec: StoreSpec<any>, sorted: Uint32Array, binding: JournalBinding, live: number): boolean {
  const parts = writeParts(root, spec.file, sorted);
  return parts !== undefined && installBase(root, spec, parts, binding, live);
}

/** Names `parts` (written in sort order) as a whole new base, with no log. False when not written. */
export function installBase(root: string, spec: StoreSpec<any>, parts: RunRef[], binding: JournalBinding, live: number): boolean {
  const manifest: Manifest = { binding, live, parts, frozen: [], retired: [] };
  if (!writeManifest(root, spec, manifest)) return false;
  sweep(root, spec.file, manifest);
  return true;
}

/** Freezes `extra` (the log's and a write's entries) into a new frozen run: a new index file, with no log. */
export function freeze(root: string, spec: StoreSpec<any>, m: Manifest, extra: EntryList, binding: JournalBinding, live: number): Manifest | undefined {
  const run = writeRun(root, spec.file, extra.sorted());
  if (run === undefined) return undefined;
  const next: Manifest = { ...m, binding, live, frozen: [...m.frozen, { ...run, cursor: 0 }] };
  if (!writeManifest(root, spec, next)) return undefined;
  sweep(root, spec.file, next);
  return next;
}

/**
 * Merges the oldest frozen run into the next partitions, at most MERGE_BUDGET entries of them (one partition at
 * least). Writes the index file anew: the new manifest, then `log` (the log's entries and last meta). False after damage.
 */
export function mergeStep(tables: IndexTables, root: string, spec: StoreSpec<any>, log?: { entries: Uint32Array; meta: BlockMeta }): boolean {
  const m = tables.manifest;
  const run = m.frozen[0];
  if (run === undefined) return true;
  let fresh: Uint32Array;
  let latest: Map<string, number>;
  const superseded = new Set<number>();
  try {
    const all = new EntryList(run.entries);
    tables.table(run).eachPage((w) => all.appendWords(w));
    latest = latestSecondaries(all);
    fresh = keepLatest(all, latest);
    // (space:hi:lo:check) — the quick test is by lo.
    for (const id of latest.keys()) superseded.add(Number(id.split(':')[2]));
  } catch (error) {
    if (error instanceof DerivedDamage) return false;
    throw error;
  }
  const parts = [...m.parts];
  const retired: string[] = [];
  let cursor = run.cursor;
  let budget = mergeBudget();
  const freshCount = fresh.length / ENTRY_WORDS;
  // Where partition `cursor` starts in `fresh` (every fresh entry before it is merged already).
  let f = 0;
  if (cursor > 0) while (f < freshCount && compareFirst(fresh, f, parts[cursor]!.first) < 0) f++;
  try {
    if (parts.length === 0) {
      const made = writeParts(root, spec.file, fresh);
      if (made === undefined) return true;
      parts.push(...made);
      cursor = parts.length;
    }
    while (cursor < parts.length && budget > 0) {
      const ref = parts[cursor]!;
      const upper = parts[cursor + 1]?.first;
      const merged = new EntryList(ref.entries + 64);
      tables.table(ref).eachPage((w) => {
        // Runs of the page between fresh entries and dropped ones are copied whole.
        const n = w.length / ENTRY_WORDS;
        let from = 0;
        for (let i = 0; i < n; i++) {
          const x = i * ENTRY_WORDS;
          // A secondary entry the frozen run supersedes is dropped (a quick numeric test first, then the exact one).
          const drop = w[x]! >>> 24 !== KEY_SPACE && superseded.has(w[x + 3]!) && latest.has(`${w[x]! >>> 24}:${entityOf(w, x)}`);
          const insert = f < freshCount && compareAt(fresh, f, w, i) < 0 && (upper === undefined || compareFirst(fresh, f, upper) < 0);
          if (!drop && !insert) continue;
          merged.appendWords(w.subarray(from * ENTRY_WORDS, x));
          while (f < freshCount && compareAt(fresh, f, w, i) < 0 && (upper === undefined || compareFirst(fresh, f, upper) < 0)) merged.pushFrom(fresh, f++);
          from = drop ? i + 1 : i;
        }
        merged.appendWords(w.subarray(from * ENTRY_WORDS));
      });
      while (f < freshCount && (upper === undefined || compareFirst(fresh, f, upper) < 0)) merged.pushFrom(fresh, f++);
      // A partition left empty is dropped (the one before it then reaches up to the next one's first entry).
      const made =
        merged.count === 0 && parts.length > 1
          ? []
          : merged.count > 2 * partEntries()
            ? writeParts(root, spec.file, merged.view())
            : [writeRun(root, spec.file, merged.view())];
      if (made === undefined || made.some((r) => r === undefined)) return true;
      parts.splice(cursor, 1, ...(made as RunRef[]));
      retired.push(ref.id);
      cursor += made.length;
      budget -= ref.entries;
    }
  } catch (error) {
    if (error instanceof DerivedDamage) return false;
    throw error;
  }
  const done = cursor >= parts.length;
  if (done) retired.push(run.id);
  const frozen: FrozenRef[] = done ? m.frozen.slice(1) : [{ ...run, cursor }, ...m.frozen.slice(1)];
  const next: Manifest = { ...m, parts, frozen, retired };
  if (!writeManifest(root, spec, next, log)) return true;
  // What the step before retired is no longer named by any manifest a reader can have just opened.
  for (const id of m.retired) dropRun(root, spec.file, id);
  return true;
}

/**
 * A whole index from a full replay: every record's key line (`records`, in journal order) and every entity's
 * secondary keys as `state` holds them.
 */
export function buildIndex<S>(
  root: string,
  spec: StoreSpec<S>,
  state: S,
  records: EntryList,
  keys: Iterable<string>,
  binding: JournalBinding,
  live: number,
): void {
  const all = new EntryList(records.count + 16);
  all.append(records);
  for (const key of keys) secondaryEntries(all, spec, state, key, binding.size, false);
  if (!writeWholeBase(root, spec, all.sorted(), binding, live)) dropIndexFiles(root, spec.file);
}

/** Removes run files no manifest names (a crash between a run and its manifest, a lost race) once old; v6's log file. */
function sweep(root: string, file: string, m: Manifest): void {
  dropCacheFile(root, oldLogName(file));
  const known = new Set([...m.parts, ...m.frozen].map((r) => r.id).concat(m.retired));
  for (const id of strayRuns(root, file, known, 60_000)) dropRun(root, file, id);
}
