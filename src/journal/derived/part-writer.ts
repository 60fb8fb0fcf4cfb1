// A streamed rebuild's new base (rebuild.ts): entries given in sort order, written as the base's partitions (runs
// in index-base.ts's format), each encoded in one page buffer kept from partition to partition.
import { ENTRY_WORDS, EntryList } from './entries';
import { type RunRef, writeRun } from './index-base';
import { PAGE_BYTES, PAGE_ENTRIES } from './sorted-table';
import { SpillFailed } from './spill';

/** Writes entries, given in sort order, as the base's partitions of `per` entries each. */
export class PartWriter {
  private part: EntryList;
  /** The pages of a partition, reused from one to the next. */
  private pages: Buffer | undefined;
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

  pushWords(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6: number, w7: number): void {
    if (this.part.count >= this.per) this.write();
    this.part.push(w0, w1, w2, w3, w4, w5, w6, w7);
  }

  /** The partitions (one empty one for no entries at all). */
  finish(): RunRef[] {
    if (this.part.count > 0 || this.parts.length === 0) this.write();
    return this.parts;
  }

  private write(): void {
    this.pages ??= Buffer.allocUnsafeSlow(Math.ceil(this.per / PAGE_ENTRIES) * PAGE_BYTES);
    const run = writeRun(this.root, this.file, this.part.view(), this.pages);
    if (run === undefined) throw new SpillFailed(`${this.file}: an index partition could not be written`);
    this.parts.push(run);
    this.part.count = 0;
  }
}
