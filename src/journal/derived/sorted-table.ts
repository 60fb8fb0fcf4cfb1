// The base of an index: every entry, sorted, in 4 KiB pages that each carry their own checksum, so that a
// lookup reads and verifies only the pages on its path (a binary search over pages: ~14 reads at 1M entries)
// and a damaged page is found by the read that would have used it.
//
// File: the pages, nothing else (an index run's, index-base.ts, or a spilled run's, spill.ts: whoever names the
// table knows its nonce and its entries). A page holds up to 127 entries (4064 bytes), then zeros, the entry count
// (u32 at 4088) and the CRC-32 of bytes 0–4091 seeded with the table's nonce and the page number (u32 at 4092).
import { fs } from '../../shared/fs';
import { crc32, seedOf } from './checksum';
import { compareKey, ENTRY_BYTES, ENTRY_WORDS } from './entries';

export const PAGE_BYTES = 4096;
export const PAGE_ENTRIES = 127;
const COUNT_AT = 4088;
const CRC_AT = 4092;
/** Pages a long range reads at once (256 KiB). */
const SPAN_PAGES = 64;
/** Pages a stream of pages (a merge's) reads at once (128 KiB). */
export const STREAM_PAGES = 32;
const TWO32 = 0x1_0000_0000;

/** Damage found in a derived file while reading it: the caller bypasses the file and rebuilds it. */
export class DerivedDamage extends Error {}

/** The pages of a sorted entry list (entries already sorted), in `into` when it is large enough (a writer's, reused). */
export function encodePages(sorted: Uint32Array, nonce: number, into?: Buffer): Buffer {
  const count = sorted.length / ENTRY_WORDS;
  const pages = Math.ceil(count / PAGE_ENTRIES);
  const out = into !== undefined && into.length >= pages * PAGE_BYTES ? into.subarray(0, pages * PAGE_BYTES) : Buffer.alloc(pages * PAGE_BYTES);
  const src = Buffer.from(sorted.buffer, sorted.byteOffset, sorted.byteLength);
  for (let p = 0; p < pages; p++) {
    const first = p * PAGE_ENTRIES;
    const n = Math.min(PAGE_ENTRIES, count - first);
    const page = out.subarray(p * PAGE_BYTES, (p + 1) * PAGE_BYTES);
    src.copy(page, 0, first * ENTRY_BYTES, (first + n) * ENTRY_BYTES);
    page.fill(0, n * ENTRY_BYTES, COUNT_AT);
    page.writeUInt32LE(n, COUNT_AT);
    page.writeUInt32LE(crc32(page.subarray(0, CRC_AT), seedOf(nonce, p)), CRC_AT);
  }
  return out;
}

/** A sorted table open for positioned lookups; pages are read on demand and verified once each. */
export class SortedTable {
  private readonly cache = new Map<number, Uint32Array>();
  /** Pages read ahead by spans(), each verified when first used. */
  private chunk: { first: number; pages: number; buf: Buffer } | undefined;
  /** Sort keys about where the table starts and ends (bound()), as numbers: undefined until known. */
  private low: number | undefined;
  private high: number | undefined;

  constructor(
    private readonly fd: number,
    private readonly nonce: number,
    readonly pages: number,
    readonly entries: number,
    /** Where the pages start in the file (a spilled run's, in its sort's scratch file: spill.ts). */
    private readonly start = 0,
  ) {}

  /** Page p's entries; throws DerivedDamage when it does not verify. */
  page(p: number): Uint32Array {
    const cached = this.cache.get(p);
    if (cached !== undefined) return cached;
    const chunk = this.chunk;
    const inChunk = chunk !== undefined && p >= chunk.first && p < chunk.first + chunk.pages;
    const buf = inChunk ? chunk.buf : this.read(p, 1);
    const from = inChunk ? (p - chunk.first) * PAGE_BYTES : 0;
    if (buf.length - from < PAGE_BYTES) throw new DerivedDamage(`page ${p} is short`);
    // Plain views (V8's own), not Buffer's readUInt32LE and subarray, which run as JS, cold in a short command.
    const page = new Uint32Array(buf.buffer, buf.byteOffset + from, PAGE_BYTES / 4);
    const count = page[COUNT_AT / 4]!;
    const expected = p === this.pages - 1 ? this.entries - p * PAGE_ENTRIES : PAGE_ENTRIES;
    if (count !== expected || page[CRC_AT / 4] !== crc32(new Uint8Array(buf.buffer, buf.byteOffset + from, CRC_AT), seedOf(this.nonce, p))) {
      throw new DerivedDamage(`page ${p} does not verify`);
    }
    const words = new Uint32Array(buf.buffer, buf.byteOffset + from, count * ENTRY_WORDS);
    this.cache.set(p, words);
    return words;
  }

  /** Pages [first, first + n) as read (short at the end of the file), not verified yet; into `into` when it is large enough. */
  private read(first: number, n: number, into?: Buffer): Buffer {
    const buf = into !== undefined && into.length >= n * PAGE_BYTES ? into : Buffer.allocUnsafeSlow(n * PAGE_BYTES);
    try {
      return buf.subarray(0, fs.readSync(this.fd, buf, 0, n * PAGE_BYTES, this.start + first * PAGE_BYTES));
    } catch {
      throw new DerivedDamage(`page ${first} unreadable`);
    }
  }

  /**
   * The first page whose last entry is ≥ (hi, lo): a search over pages that places each probe by
   * interpolation between the keys known at the ends of the pages left (a key's sort key is a hash, spread
   * evenly: ~4 pages read of a 2 MiB partition, where halving read ~10, each a read and a CRC of 4 KiB), and
   * halves instead after a probe that did not halve them (values bunched together: at most twice halving's).
   */
  private firstPageFrom(hi: number, lo: number): number {
    const last = this.pages - 1;
    if (last <= 0) return 0;
    const target = hi * TWO32 + lo;
    // Pages a..b hold the answer; loKey and hiKey are sort keys about where page a starts and page b ends: the
    // bounds the caller knows (bound()), else those of the first and last pages, read.
    let a = 0;
    let b = last;
    let loKey = this.low;
    let hiKey = this.high;
    if (loKey === undefined) {
      if (this.lastKey(0, hi, lo) >= 0) return 0;
      a = 1;
      loKey = this.lastValue(0);
    }
    if (hiKey === undefined) {
      if (this.lastKey(last, hi, lo) < 0) return last;
      hiKey = this.lastValue(last);
    }
    let interpolate = true;
    while (a < b) {
      const span = b - a;
      const guess = interpolate && hiKey > loKey ? a + Math.floor(((target - loKey) / (hiKey - loKey)) * (span + 1)) : (a + b) >> 1;
      const p = Math.max(a, Math.min(b - 1, guess));
      if (this.lastKey(p, hi, lo) < 0) {
        a = p + 1;
        loKey = this.lastValue(p);
      } else {
        // The probe is the answer when its first entry is below the key (so the page before it ends below).
        const words = this.page(p);
        if (compareKey(words, 0, hi, lo) < 0) return p;
        b = p;
        hiKey = this.lastValue(p);
      }
      interpolate = b - a <= span / 2;
    }
    return a;
  }

  /**
   * Where the table's sort keys start and about where they end (the key after its last), as the caller knows
   * them (a partition's first key and the next one's, from the manifest): the search then reads no page to
   * learn them. Used only to place probes: bounds that are wrong cost reads, never an answer.
   */
  bound(low: readonly number[], high: readonly number[] | undefined): void {
    if (low.length >= 2) this.low = low[0]! * TWO32 + low[1]!;
    if (high !== undefined && high.length >= 2) this.high = high[0]! * TWO32 + high[1]!;
  }

  /** How page p's last entry compares with (hi, lo). */
  private lastKey(p: number, hi: number, lo: number): number {
    const words = this.page(p);
    return compareKey(words, words.length / ENTRY_WORDS - 1, hi, lo);
  }

  /** Page p's last sort key as one number (approximate past 2^53: for interpolation only). */
  private lastValue(p: number): number {
    const words = this.page(p);
    const x = words.length - ENTRY_WORDS;
    return words[x]! * TWO32 + words[x + 1]!;
  }

  /**
   * The entries whose sort key lies in [from, to], as spans of pages: `visit(words, start, end)` for entries
   * start ≤ i < end of one page, in order. Pages past the first are read several at a time (one read each),
   * verified as each is used, and not kept: a long range is counted or ordered without a call per entry.
   * A visit that returns true stops the read (spans then returns true).
   */
  spans(fromHi: number, fromLo: number, toHi: number, toLo: number, visit: (words: Uint32Array, start: number, end: number) => boolean | void): boolean {
    if (this.pages === 0) return false;
    // Read ahead in doubling chunks: a short range reads little more than its pages, a long one 256 KiB a read.
    let ahead = 2;
    for (let p = this.firstPageFrom(fromHi, fromLo); p < this.pages; p++) {
      if (this.readAhead(p, ahead)) ahead = Math.min(SPAN_PAGES, ahead * 2);
      const words = this.take(p);
      const n = words.length / ENTRY_WORDS;
      let start = 0;
      while (start < n && compareKey(words, start, fromHi, fromLo) < 0) start++;
      let end = n;
      if (compareKey(words, n - 1, toHi, toLo) > 0) {
        end = start;
        while (end < n && compareKey(words, end, toHi, toLo) <= 0) end++;
      }
      if (end > start && visit(words, start, end) === true) return true;
      if (end < n) return false;
    }
    return false;
  }

  /**
   * The entries whose sort key lies in [from, to], highest first, as spans of pages: [words, start, end] for
   * entries start ≤ i < end of one page (to be read from end - 1 down), from the page that holds `to` down.
   * Each page is read when the caller asks for the span after the one before it, and verified: a limited read
   * that stops after its first rows reads the pages of those rows only.
   */
  *spansDown(fromHi: number, fromLo: number, toHi: number, toLo: number): Generator<readonly [words: Uint32Array, start: number, end: number]> {
    if (this.pages === 0) return;
    // The first page whose last entry is past `to`: every entry up to `to` is on it or below it (entries equal to
    // `to` may run over several pages).
    const [pastHi, pastLo] = toLo === 0xffffffff ? [toHi + 1, 0] : [toHi, toLo + 1];
    for (let p = this.firstPageFrom(pastHi, pastLo); p >= 0; p--) {
      const words = this.page(p);
      this.cache.delete(p);
      let end = words.length / ENTRY_WORDS;
      while (end > 0 && compareKey(words, end - 1, toHi, toLo) > 0) end--;
      let start = end;
      while (start > 0 && compareKey(words, start - 1, fromHi, fromLo) >= 0) start--;
      if (end > start) yield [words, start, end];
      // An entry below `from` on this page: the pages below hold none in the range.
      if (start > 0) return;
    }
  }

  /**
   * Every entry whose sort key (words 0–1) lies in [from, to], in order, as copies of their eight words.
   * Reads the pages of a binary search for `from`, then the pages the range spans.
   */
  range(fromHi: number, fromLo: number, toHi: number, toLo: number, visit: (words: Uint32Array, index: number) => void): void {
    if (this.pages === 0) return;
    for (let p = this.firstPageFrom(fromHi, fromLo); p < this.pages; p++) {
      const words = this.page(p);
      const n = words.length / ENTRY_WORDS;
      for (let i = 0; i < n; i++) {
        if (compareKey(words, i, fromHi, fromLo) < 0) continue;
        if (compareKey(words, i, toHi, toLo) > 0) return;
        visit(words, i);
      }
    }
  }

  /** Every page's entries, in order (for a merge), verifying every page. */
  eachPage(visit: (words: Uint32Array) => void): void {
    for (let p = 0; p < this.pages; p++) {
      this.readAhead(p, STREAM_PAGES);
      visit(this.take(p));
    }
  }

  /** Page p, not kept once returned (a stream of pages in order: read them ahead). */
  take(p: number): Uint32Array {
    const words = this.page(p);
    this.cache.delete(p);
    return words;
  }

  /**
   * Reads pages [p, p + n) in one read unless page p is at hand; whether it read. `reuse`: into the pages read ahead
   * before (a stream's, whose pages taken before are no longer used: a spilled run's, spill.ts).
   */
  readAhead(p: number, n: number, reuse = false): boolean {
    const c = this.chunk;
    if (this.cache.has(p) || (c !== undefined && p >= c.first && p < c.first + c.pages)) return false;
    const pages = Math.min(n, this.pages - p);
    // A chunk's buffer is its own (allocUnsafeSlow: never pooled), whole from its ArrayBuffer's start.
    this.chunk = { first: p, pages, buf: this.read(p, pages, reuse && c !== undefined ? Buffer.from(c.buf.buffer) : undefined) };
    return true;
  }
}
