// Sorting more index entries than memory should hold (a rebuild's): entries gather in a bounded buffer; each
// full buffer is sorted and spilled as a run file (index-base.ts's format, every page checksummed), opened
// and unlinked at once, so that a crash leaves at most one stray run (swept by the next write) and no sweep
// removes one in use; then they are read back merged, a page of each run at a time.
import { fs } from '../../shared/fs';
import { compareAt, ENTRY_WORDS, EntryList } from './entries';
import { dropRun, openRun, writeRun, type RunRef } from './index-base';
import type { SortedTable } from './sorted-table';

/** Entries a buffer holds before it is spilled (4 MiB); CRUX_TEST_REBUILD_ENTRIES lowers it, so that tests spill. */
const spillEntries = () => Number(process.env.CRUX_TEST_REBUILD_ENTRIES) || 1 << 17;

/** A run could not be written (a full disk, an unusable cache/): nothing is built. */
export class SpillFailed extends Error {}

/** One sorted source of a merge: a spilled run read page by page, or the last buffer, sorted in memory. */
class Source {
  words: Uint32Array<ArrayBufferLike>;
  index = 0;
  private page = 0;

  constructor(
    first: Uint32Array<ArrayBufferLike>,
    private readonly table?: SortedTable,
  ) {
    this.words = first;
  }

  get done(): boolean {
    return this.index * ENTRY_WORDS >= this.words.length;
  }

  next(): void {
    this.index += 1;
    if (!this.done || this.table === undefined || this.page + 1 >= this.table.pages) return;
    this.table.forget(this.page);
    this.page += 1;
    this.words = this.table.pageInOrder(this.page);
    this.index = 0;
  }
}

/**
 * Entries pushed in any order, read back sorted by their first four words; equals keep the order they were
 * pushed in. `sortWords: 2`: by their first two words only, equals in those kept in the order pushed (which is
 * the same order when each key's entries are pushed in the order of their words 2–3, at half the sort's passes).
 */
export class SpillSort {
  private buffer: EntryList;
  private readonly runs: { table: SortedTable; fd: number }[] = [];

  constructor(
    private readonly root: string,
    private readonly file: string,
    private readonly sortWords: 2 | 4 = 4,
    private readonly capacity = spillEntries(),
  ) {
    this.buffer = new EntryList(Math.min(capacity, 1024));
  }

  push(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6 = 0, w7 = 0): void {
    if (this.buffer.count >= this.capacity) this.spill();
    this.buffer.push(w0, w1, w2, w3, w4, w5, w6, w7);
  }

  pushFrom(words: Uint32Array, i: number): void {
    if (this.buffer.count >= this.capacity) this.spill();
    this.buffer.pushFrom(words, i);
  }

  private spill(): void {
    const ref: RunRef | undefined = writeRun(this.root, this.file, this.buffer.sorted(this.sortWords));
    const run = ref === undefined ? undefined : openRun(this.root, this.file, ref);
    if (ref !== undefined) dropRun(this.root, this.file, ref.id);
    if (run === undefined) throw new SpillFailed(`${this.file}: a sorted run could not be spilled`);
    this.runs.push(run);
    this.buffer.count = 0;
  }

  /** The merge of everything pushed; call once, after the last push. */
  merged(): Merged {
    const sources = this.runs.filter((r) => r.table.pages > 0).map((r) => new Source(r.table.pageInOrder(0), r.table));
    const rest = this.buffer.sorted(this.sortWords);
    this.buffer = new EntryList(1);
    if (rest.length > 0) sources.push(new Source(rest));
    return new Merged(sources);
  }

  close(): void {
    for (const run of this.runs) fs.closeSync(run.fd);
    this.runs.length = 0;
  }
}

/** A k-way merge: `words` and `index` name the current entry until `done`. Reads may throw DerivedDamage. */
export class Merged {
  words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  index = 0;
  done = false;
  /** Sources as a binary heap, least entry first (of equals, the earlier source: the sort is stable). */
  private readonly heap: number[];

  constructor(private readonly sources: Source[]) {
    this.heap = sources.map((_, i) => i);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
    this.show();
  }

  next(): void {
    const top = this.sources[this.heap[0]!]!;
    top.next();
    if (top.done) {
      this.heap[0] = this.heap[this.heap.length - 1]!;
      this.heap.pop();
    }
    if (this.heap.length > 0) this.down(0);
    this.show();
  }

  private show(): void {
    if (this.heap.length === 0) {
      this.done = true;
      return;
    }
    const top = this.sources[this.heap[0]!]!;
    this.words = top.words;
    this.index = top.index;
  }

  private less(a: number, b: number): boolean {
    const x = this.sources[a]!;
    const y = this.sources[b]!;
    const d = compareAt(x.words, x.index, y.words, y.index);
    return d < 0 || (d === 0 && a < b);
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < h.length && this.less(h[l]!, h[least]!)) least = l;
      if (r < h.length && this.less(h[r]!, h[least]!)) least = r;
      if (least === i) return;
      [h[i], h[least]] = [h[least]!, h[i]!];
      i = least;
    }
  }
}

/** Writes entries, given in sort order, as the base's partitions of `per` entries each. */
export class PartWriter {
  private part: EntryList;
  readonly parts: RunRef[] = [];

  constructor(
    private readonly root: string,
    private readonly file: string,
    private readonly per: number,
  ) {
    this.part = new EntryList(per);
  }

  /** Entry `i` of `words`, with word 7 set to `w7`. */
  push(words: Uint32Array, i: number, w7: number): void {
    if (this.part.count >= this.per) this.write();
    const x = i * ENTRY_WORDS;
    this.part.push(words[x]!, words[x + 1]!, words[x + 2]!, words[x + 3]!, words[x + 4]!, words[x + 5]!, words[x + 6]!, w7);
  }

  /** The partitions (one empty one for no entries at all). */
  finish(): RunRef[] {
    if (this.part.count > 0 || this.parts.length === 0) this.write();
    return this.parts;
  }

  private write(): void {
    const run = writeRun(this.root, this.file, this.part.view());
    if (run === undefined) throw new SpillFailed(`${this.file}: an index partition could not be written`);
    this.parts.push(run);
    this.part.count = 0;
  }
}
