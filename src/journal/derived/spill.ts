// Over 300 lines: the spilled sort and the scratch space of a streamed build, made of it.
// Sorting more index entries than memory should hold (a rebuild's): entries gather in a bounded buffer; each
// full buffer is sorted and spilled as a run, appended to the sort's one scratch file in cache/ (opened and
// unlinked at once, so that a crash leaves at most one stray file, swept by the next write as a stray run is,
// and no sweep removes one in use); then they are read back merged, a few pages of each run at a time. A run is
// the sorted table's framing (sorted-table.ts: checksummed 4 KiB pages, seeded with the run's nonce, kept in memory:
// the file is this process's alone): a page that does not come back whole fails the sort (SpillFailed), and nothing
// is built.
import { join } from 'node:path';
import { fs } from '../../shared/fs';
import { ensurePrivateDir, FILE_MODE } from '../../shared/durable-fs';
import { CACHE_DIR, cachePath, newNonce, writeFully } from './cache-file';
import type { Scratch, ScratchFile } from '../codec/store-spec';
import { compareAt, ENTRY_WORDS, EntryList, hash56, SortScratch } from './entries';
import { DerivedDamage, encodePages, PAGE_BYTES, PAGE_ENTRIES, SortedTable, STREAM_PAGES } from './sorted-table';
import { testHook } from '../../shared/test-hooks';

/** Entries a buffer holds before it is spilled (4 MiB); CRUX_TEST_REBUILD_ENTRIES lowers it, so that tests spill. */
const spillEntries = () => Number(testHook('CRUX_TEST_REBUILD_ENTRIES')) || 1 << 17;

/** A run could not be written (a full disk, an unusable cache/), or did not read back whole: nothing is built. */
export class SpillFailed extends Error {}

/**
 * A new file in cache/ for scratch, already unlinked (named as a stray index run would be, so that the one a crash
 * between the two leaves is swept with them: index-base.ts strayRuns). SpillFailed when it cannot be made.
 */
function openScratchFile(root: string, journal: string): number {
  const path = cachePath(root, `${journal}.idx.${newNonce().toString(16).padStart(8, '0')}`);
  let fd: number;
  try {
    ensurePrivateDir(join(root, CACHE_DIR));
    fd = fs.openSync(path, 'wx+', FILE_MODE);
  } catch (error) {
    throw new SpillFailed(`${journal}: a scratch file could not be made (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
  try {
    fs.unlinkSync(path);
  } catch {
    // Left behind, it is swept as a stray run; it is still ours to use.
  }
  return fd;
}

/**
 * The arrays every spill sorts in (~6 MiB at the default capacity), one set for all the sorts open at once — a spill
 * writes what it sorted before it returns — let go when the last of them closes.
 */
let shared: SortScratch | undefined;
let openSorts = 0;
const spillScratch = () => (shared ??= new SortScratch());

/** One sorted source of a merge: a spilled run read page by page, or the last buffer, sorted in memory. */
class Source {
  words: Uint32Array<ArrayBufferLike>;
  index = 0;
  private page = 0;

  constructor(
    first: Uint32Array<ArrayBufferLike>,
    private readonly run?: SortedTable,
  ) {
    this.words = run === undefined ? first : this.load(0);
  }

  get done(): boolean {
    return this.index * ENTRY_WORDS >= this.words.length;
  }

  next(): void {
    this.index += 1;
    if (!this.done || this.run === undefined || this.page + 1 >= this.run.pages) return;
    this.words = this.load(++this.page);
    this.index = 0;
  }

  private load(p: number): Uint32Array {
    try {
      this.run!.readAhead(p, STREAM_PAGES, true);
      return this.run!.take(p);
    } catch (error) {
      if (error instanceof DerivedDamage) throw new SpillFailed(`a sorted run did not read back as written (${error.message})`);
      throw error;
    }
  }
}

/**
 * Entries pushed in any order, read back sorted by their first four words; equals keep the order they were
 * pushed in. `sortWords: 2`: by their first two words only, equals in those kept in the order pushed (which is
 * the same order when each key's entries are pushed in the order of their words 2–3, at half the sort's passes).
 */
export class SpillSort {
  private buffer: EntryList;
  /** The spilled runs: where each starts in the scratch file, its entries, and the nonce its pages' checksums are seeded with. */
  private readonly runs: { at: number; entries: number; nonce: number }[] = [];
  private fd: number | undefined;
  private size = 0;
  private open = true;

  constructor(
    private readonly root: string,
    private readonly file: string,
    private readonly sortWords: 2 | 4 = 4,
    private readonly capacity = spillEntries(),
  ) {
    this.buffer = new EntryList(Math.min(capacity, 1024));
    openSorts += 1;
  }

  push(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6 = 0, w7 = 0): void {
    if (this.buffer.count >= this.capacity) this.spill();
    this.buffer.push(w0, w1, w2, w3, w4, w5, w6, w7);
  }

  pushFrom(words: Uint32Array, i: number): void {
    if (this.buffer.count >= this.capacity) this.spill();
    this.buffer.pushFrom(words, i);
  }

  /** Writes the buffer, sorted, as a run of the sorted table's checksummed pages (sorted-table.ts). */
  private spill(): void {
    this.fd ??= openScratchFile(this.root, this.file);
    const sorted = this.buffer.sorted(this.sortWords, spillScratch());
    const run = { at: this.size, entries: this.buffer.count, nonce: newNonce() };
    const pages = Math.ceil(run.entries / PAGE_ENTRIES) * PAGE_BYTES;
    const into = spillScratch().array(5, pages / 4);
    const bytes = encodePages(sorted, run.nonce, Buffer.from(into.buffer, into.byteOffset, pages));
    try {
      writeFully(this.fd, bytes, this.size);
    } catch (error) {
      throw new SpillFailed(`${this.file}: a sorted run could not be spilled (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
    this.runs.push(run);
    this.size += bytes.length;
    this.buffer.count = 0;
  }

  /** The merge of everything pushed; call once, after the last push. */
  merged(): Merged {
    const fd = this.fd!;
    const sources = this.runs
      .filter((r) => r.entries > 0)
      .map((r) => new Source(new Uint32Array(0), new SortedTable(fd, r.nonce, Math.ceil(r.entries / PAGE_ENTRIES), r.entries, r.at)));
    // Its own array: it is read through the merge, while other sorts may spill.
    const rest = this.buffer.sorted(this.sortWords);
    this.buffer = new EntryList(1);
    if (rest.length > 0) sources.push(new Source(rest));
    return new Merged(sources);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.runs.length = 0;
    if (this.open) {
      this.open = false;
      if (--openSorts === 0) shared = undefined;
    }
  }
}

/** A k-way merge: `words` and `index` name the current entry until `done`. Reads may throw SpillFailed. */
export class Merged {
  words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  index = 0;
  done = false;
  /** Sources as a binary heap, least entry first (of equals, the earlier source: the sort is stable). */
  private readonly heap: Int32Array;
  private size: number;
  /** Each source's current entry's words 0 and 1 (what most comparisons decide on), kept beside the heap. */
  private readonly w0: Uint32Array;
  private readonly w1: Uint32Array;

  constructor(private readonly sources: Source[]) {
    this.size = sources.length;
    this.heap = new Int32Array(this.size);
    this.w0 = new Uint32Array(this.size);
    this.w1 = new Uint32Array(this.size);
    for (let i = 0; i < this.size; i++) {
      this.heap[i] = i;
      this.head(i);
    }
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
    this.show();
  }

  next(): void {
    const s = this.heap[0]!;
    const top = this.sources[s]!;
    top.next();
    if (top.done) this.heap[0] = this.heap[--this.size]!;
    else this.head(s);
    if (this.size > 0) this.down(0);
    this.show();
  }

  private head(s: number): void {
    const source = this.sources[s]!;
    const x = source.index * ENTRY_WORDS;
    this.w0[s] = source.words[x]!;
    this.w1[s] = source.words[x + 1]!;
  }

  private show(): void {
    if (this.size === 0) {
      this.done = true;
      return;
    }
    const top = this.sources[this.heap[0]!]!;
    this.words = top.words;
    this.index = top.index;
  }

  private less(a: number, b: number): boolean {
    if (this.w0[a] !== this.w0[b]) return this.w0[a]! < this.w0[b]!;
    if (this.w1[a] !== this.w1[b]) return this.w1[a]! < this.w1[b]!;
    const x = this.sources[a]!;
    const y = this.sources[b]!;
    const d = compareAt(x.words, x.index, y.words, y.index);
    return d < 0 || (d === 0 && a < b);
  }

  /** Sifts the source at heap slot `i` down to its place. */
  private down(i: number): void {
    const h = this.heap;
    const s = h[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && this.less(h[c + 1]!, h[c]!)) c += 1;
      if (!this.less(h[c]!, s)) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = s;
  }
}

// Scratch space for a streamed snapshot build (snapshot-stream.ts): plain files in cache/, each unlinked as soon as
// it is open (openScratchFile), and sorts that spill their runs there. Any failure to create, write or read them (a
// full disk, an unusable cache/) throws SpillFailed: the build is given up, the caller replays.
export class ScratchSpace implements Scratch {
  private readonly files: FileOnDisk[] = [];
  private readonly sorts: SpillSort[] = [];

  constructor(
    private readonly root: string,
    private readonly journal: string,
  ) {}

  file(): ScratchFile {
    const fd = openScratchFile(this.root, this.journal);
    const file = new FileOnDisk(fd, this.journal);
    this.files.push(file);
    return file;
  }

  sort(words: 2 | 4): SpillSort {
    const sort = new SpillSort(this.root, this.journal, words);
    this.sorts.push(sort);
    return sort;
  }

  keyHash(text: string): [number, number] {
    return hash56(text);
  }

  close(): void {
    for (const file of this.files) file.close();
    for (const sort of this.sorts) sort.close();
    this.files.length = this.sorts.length = 0;
  }
}

class FileOnDisk implements ScratchFile {
  size = 0;

  constructor(
    private readonly fd: number,
    private readonly journal: string,
  ) {}

  append(bytes: Uint8Array): void {
    try {
      writeFully(this.fd, bytes, this.size);
    } catch (error) {
      throw new SpillFailed(`${this.journal}: a scratch file could not be written (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
    this.size += bytes.length;
  }

  read(into: Uint8Array, position: number): number {
    try {
      return fs.readSync(this.fd, into, 0, Math.min(into.length, Math.max(0, this.size - position)), position);
    } catch (error) {
      throw new SpillFailed(`${this.journal}: a scratch file could not be read (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
  }

  close(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }
}
