// The retrieval terms of each case a streamed bank build folds (stream.ts), numbered as a Map of terms in order
// of first appearance numbers them, and listed in caseTerms's order (the task's tokens, then each tag's, each term once,
// at its first appearance) — without a string or a Set made for a term already known. ASCII text (most of it) is split
// and lowercased by one loop whose running hash finds the term's number in an open-addressing table, and the term is
// compared there unit by unit with the one stored; only a new term is cut out as a string. Text that is not ASCII is
// tokenized by the domain's tokenize (handed to the table), and its terms are looked up by the same hash. At 1M cases this was ~9M Map lookups
// of fresh substrings (each hashed by V8 first) and a Set a case: ~2.5 s of a 12 s build.

const BASIS = 0x811c9dc5;
const PRIME = 0x01000193;

export class TermTable {
  /** Every term, by its number. */
  readonly vocab: string[] = [];
  /** The numbers of the last case's terms, in order: `ids[0 .. count)`. */
  ids = new Int32Array(64);
  count = 0;
  private hashes = new Uint32Array(1024);
  /** The case that last listed each term (so that a case lists a term once). */
  private listed = new Int32Array(1024);
  private stamp = 0;
  private slots = new Int32Array(4096).fill(-1);

  constructor(private readonly tokenize: (text: string) => Iterable<string>) {}

  /** Lists the terms of a case with this task and these tags (`ids`, `count`); returns the count. */
  termsOf(task: string, tags: readonly string[]): number {
    this.stamp += 1;
    this.count = 0;
    this.add(task);
    for (const tag of tags) this.add(tag);
    return this.count;
  }

  /** Lists these terms as they are (a case's marks) after the ones listed by termsOf; returns the count of all. */
  withMarks(marks: readonly string[]): number {
    for (const mark of marks) this.list(this.numberOf(mark));
    return this.count;
  }

  private add(text: string): void {
    if (this.addAscii(text)) return;
    for (const term of this.tokenize(text)) this.list(this.numberOf(term));
  }

  /** The runs of a–z and 0–9 of ASCII text lowercased, as tokenize.ts finds them; false for text that is not ASCII. */
  private addAscii(text: string): boolean {
    const n = text.length;
    for (let i = 0; i < n; i++) if (text.charCodeAt(i) > 0x7f) return false;
    let start = -1;
    let h = BASIS;
    for (let i = 0; i <= n; i++) {
      let c = i < n ? text.charCodeAt(i) : 0;
      if (c >= 65 && c <= 90) c += 32;
      if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
        if (start < 0) {
          start = i;
          h = BASIS;
        }
        h = Math.imul(h ^ c, PRIME);
      } else if (start >= 0) {
        if (i - start >= 2) this.list(this.asciiNumber(text, start, i, h >>> 0));
        start = -1;
      }
    }
    return true;
  }

  /** The number of the term text[start, end) lowercased (ASCII), hashing to `h`; a new number for a new term. */
  private asciiNumber(text: string, start: number, end: number, h: number): number {
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const t = this.slots[s]!;
      if (t < 0) return this.insert(text.slice(start, end).toLowerCase(), h, s);
      if (this.hashes[t] === h && sameLowered(this.vocab[t]!, text, start, end)) return t;
    }
  }

  /** The number of `term` (already lowercased); a new number for a new term. */
  private numberOf(term: string): number {
    let h = BASIS;
    for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), PRIME);
    h >>>= 0;
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const t = this.slots[s]!;
      if (t < 0) return this.insert(term, h, s);
      if (this.hashes[t] === h && this.vocab[t] === term) return t;
    }
  }

  private insert(term: string, h: number, slot: number): number {
    const t = this.vocab.length;
    this.vocab.push(term);
    if (t === this.hashes.length) {
      this.hashes = grown(this.hashes, 2 * t);
      this.listed = grown(this.listed, 2 * t);
    }
    this.hashes[t] = h;
    this.slots[slot] = t;
    if (2 * this.vocab.length > this.slots.length) this.rehash();
    return t;
  }

  private rehash(): void {
    this.slots = new Int32Array(2 * this.slots.length).fill(-1);
    const mask = this.slots.length - 1;
    for (let t = 0; t < this.vocab.length; t++) {
      let s = this.hashes[t]! & mask;
      while (this.slots[s]! >= 0) s = (s + 1) & mask;
      this.slots[s] = t;
    }
  }

  private list(t: number): void {
    if (this.listed[t] === this.stamp) return;
    this.listed[t] = this.stamp;
    if (this.count === this.ids.length) this.ids = grown(this.ids, 2 * this.count);
    this.ids[this.count++] = t;
  }
}

/** Whether `term` is text[start, end) with A–Z lowercased. */
function sameLowered(term: string, text: string, start: number, end: number): boolean {
  if (term.length !== end - start) return false;
  for (let k = 0; k < term.length; k++) {
    let c = text.charCodeAt(start + k);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== term.charCodeAt(k)) return false;
  }
  return true;
}

function grown<T extends Int32Array | Uint32Array>(a: T, size: number): T {
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}
