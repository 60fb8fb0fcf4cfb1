// Sorting more index entries than memory should hold (a rebuild's): entries gather in a bounded buffer; each
// full buffer is sorted and spilled as a run, appended to the sort's one scratch file in cache/ (opened and
// unlinked at once, so that a crash leaves at most one stray file, swept by the next write as a stray run is,
// and no sweep removes one in use); then they are read back merged, a block of each run at a time. Each block
// is checked on its way back against the CRC-32 taken as it went out (kept in memory: the file is this
// process's alone): a block that does not come back whole fails the sort (SpillFailed), and nothing is built.
import { join } from 'node:path';
import { fs } from '../../shared/fs';
import { ensurePrivateDir, FILE_MODE } from '../../shared/durable-fs';
import { CACHE_DIR, cachePath, newNonce, writeFully } from './cache-file';
import { crc32, seedOf } from './checksum';
import type { Scratch, ScratchFile } from '../codec/store-spec';
import { compareAt, ENTRY_BYTES, ENTRY_WORDS, EntryList, hash56, SortScratch } from './entries';
import { testHook } from '../../shared/test-hooks';

/** Entries a buffer holds before it is spilled (4 MiB); CRUX_TEST_REBUILD_ENTRIES lowers it, so that tests spill. */
const spillEntries = () => Number(testHook('CRUX_TEST_REBUILD_ENTRIES')) || 1 << 17;

/** Entries of a spilled run read back (and checked) at once: 128 KiB; smaller under CRUX_TEST_REBUILD_ENTRIES. */
const blockEntries = () => Math.min(4096, Math.max(1, spillEntries() >> 2));

/** A run could not be written (a full disk, an unusable cache/), or did not read back whole: nothing is built. */
export class SpillFailed extends Error {}

/**
 * A new file in cache/ for scratch, already unlinked (named as a stray index run would be, so that the one a crash
 * between the two leaves is swept with them: index-base.ts strayRuns). SpillFailed when it cannot be made.
 */
export function openScratchFile(root: string, journal: string): number {
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

/** A spilled run: where it starts in the scratch file, its entries, and the CRC-32 of each of its blocks. */
interface Run {
  readonly at: number;
  readonly entries: number;
  readonly crcs: readonly number[];
}

/** One sorted source of a merge: a spilled run read block by block, or the last buffer, sorted in memory. */
class Source {
  words: Uint32Array<ArrayBufferLike>;
  index = 0;
  private block = 0;
  private readonly buf: Buffer | undefined;

  constructor(
    first: Uint32Array<ArrayBufferLike>,
    private readonly from?: { sort: SpillSort; run: Run; per: number },
  ) {
    this.words = first;
    if (from !== undefined) {
      this.buf = Buffer.allocUnsafeSlow(from.per * ENTRY_BYTES);
      this.words = this.load(0);
    }
  }

  get done(): boolean {
    return this.index * ENTRY_WORDS >= this.words.length;
  }

  next(): void {
    this.index += 1;
    if (!this.done || this.from === undefined || this.block + 1 >= this.from.run.crcs.length) return;
    this.block += 1;
    this.words = this.load(this.block);
    this.index = 0;
  }

  private load(block: number): Uint32Array {
    const { sort, run, per } = this.from!;
    const n = Math.min(per, run.entries - block * per);
    const bytes = this.buf!.subarray(0, n * ENTRY_BYTES);
    sort.readBlock(bytes, run.at + block * per * ENTRY_BYTES, run.crcs[block]!);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, n * ENTRY_WORDS);
  }
}

/**
 * Entries pushed in any order, read back sorted by their first four words; equals keep the order they were
 * pushed in. `sortWords: 2`: by their first two words only, equals in those kept in the order pushed (which is
 * the same order when each key's entries are pushed in the order of their words 2–3, at half the sort's passes).
 */
export class SpillSort {
  private buffer: EntryList;
  private readonly runs: Run[] = [];
  private readonly nonce = newNonce();
  private fd: number | undefined;
  private size = 0;
  private readonly per = blockEntries();
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

  private spill(): void {
    this.fd ??= openScratchFile(this.root, this.file);
    const sorted = this.buffer.sorted(this.sortWords, spillScratch());
    const bytes = new Uint8Array(sorted.buffer, sorted.byteOffset, sorted.byteLength);
    const entries = this.buffer.count;
    const crcs: number[] = [];
    for (let from = 0; from < entries; from += this.per) {
      crcs.push(
        crc32(bytes.subarray(from * ENTRY_BYTES, Math.min(entries, from + this.per) * ENTRY_BYTES), seedOf(this.nonce, this.size + from * ENTRY_BYTES)),
      );
    }
    try {
      writeFully(this.fd, bytes, this.size);
    } catch (error) {
      throw new SpillFailed(`${this.file}: a sorted run could not be spilled (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
    this.runs.push({ at: this.size, entries, crcs });
    this.size += bytes.length;
    this.buffer.count = 0;
  }

  /** Reads the block at `at` into `into` and checks it; SpillFailed when it does not come back as written. */
  readBlock(into: Uint8Array, at: number, crc: number): void {
    let n = -1;
    try {
      n = fs.readSync(this.fd!, into, 0, into.length, at);
    } catch {
      // Checked below.
    }
    if (n !== into.length || crc32(into, seedOf(this.nonce, at)) !== crc) {
      throw new SpillFailed(`${this.file}: a sorted run did not read back as written`);
    }
  }

  /** The merge of everything pushed; call once, after the last push. */
  merged(): Merged {
    const sources = this.runs.filter((r) => r.entries > 0).map((run) => new Source(new Uint32Array(0), { sort: this, run, per: this.per }));
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
