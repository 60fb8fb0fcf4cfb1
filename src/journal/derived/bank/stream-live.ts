// The streamed bank build's second half (stream.ts): which puts are live, walked from the sort of every event by
// id hash, and the postings written a range of terms at a time from the postings file.
import type { ScratchFile, ScratchSort } from '../../codec/store-spec';
import type { Section, Put } from './stream-io';
import { metaSuccess } from './layout';
import type { TagTally } from './layout';

export const EV_PUT = 0;
export const EV_REUSED = 1;
export const EV_DELETED = 2;
export const TWO32 = 2 ** 32;
/** Postings (term, ordinal: 8 bytes) a read of the postings file takes. */
export const POSTINGS_PER_READ = 1 << 16;

/** Which puts are live, as bits with a rank (a live put's slot), and what finish needs of them. */
export class Live {
  count = 0;
  idBytes = 0;
  recordBytes = 0;
  private readonly bits: Uint32Array;
  private ranks: Uint32Array | undefined;

  constructor(
    puts: number,
    /** (ordinal, 0, reuse count as f64 bits lo, hi): the count set after each live put, by ordinal. */
    readonly reused: ScratchSort,
  ) {
    this.bits = new Uint32Array((puts >>> 5) + 1);
  }

  mark(ord: number): void {
    this.bits[ord >>> 5]! |= 1 << (ord & 31);
  }

  has(ord: number): boolean {
    return (this.bits[ord >>> 5]! & (1 << (ord & 31))) !== 0;
  }

  /** The slot of live put `ord`: how many live puts come before it. */
  slot(ord: number): number {
    if (this.ranks === undefined) {
      this.ranks = new Uint32Array(this.bits.length);
      let n = 0;
      for (let w = 0; w < this.bits.length; w++) {
        this.ranks[w] = n;
        n += popcount(this.bits[w]!);
      }
    }
    return this.ranks[ord >>> 5]! + popcount(this.bits[ord >>> 5]! & ((1 << (ord & 31)) - 1));
  }
}

function popcount(v: number): number {
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

// An event: (id hash hi, lo; where its id starts in the ids file, hi, lo; kind | reuse count's high bits << 2; the put's
// ordinal or the count's low bits; the id's length; the put's record length). Where its id starts is its place in the
// journal: the merge of spilled runs orders an id's events by it (it compares four words), so they come in journal order.
const idAtOf = (w: Uint32Array<ArrayBufferLike>, x: number) => w[x + 2]! * TWO32 + w[x + 3]!;

/**
 * Walks the events by id hash: per id (ids sharing a hash told apart by their bytes), in journal order, as the
 * bank folds them — a put replaces the live one, a deletion removes it, a reuse count sets the live one's.
 */
export function liveOf(events: ReturnType<ScratchSort['merged']>, ids: ScratchFile, committed: number, puts: number, reused: ScratchSort): Live {
  const live = new Live(puts, reused);
  const group: number[][] = [];
  const bits = new Float64Array(1);
  const bitsU = new Uint32Array(bits.buffer);
  const fold = (entries: readonly number[][]) => {
    let cur = -1;
    let count: number | undefined;
    let idLen = 0;
    let recLength = 0;
    for (const [kind, a, idl, rl] of entries) {
      if (kind === EV_PUT) [cur, count, idLen, recLength] = [a!, undefined, idl!, rl!];
      else if (kind === EV_DELETED) cur = -1;
      else if (cur >= 0) count = a!;
    }
    if (cur < 0) return;
    live.mark(cur);
    live.count += 1;
    live.idBytes += idLen;
    live.recordBytes += recLength + 1;
    if (count === undefined) return;
    bits[0] = count;
    reused.push(cur, 0, bitsU[0]!, bitsU[1]!, 0, 0);
  };
  const idOf = (length: number, at: number) => {
    const bytes = Buffer.allocUnsafe(length);
    if (ids.read(bytes, at) !== length) throw new RangeError('a scratch file came back short');
    return bytes.toString('latin1');
  };
  while (!events.done) {
    const w = events.words;
    const hi = w[events.index * 8]!;
    const lo = w[events.index * 8 + 1]!;
    group.length = 0;
    while (!events.done && events.words[events.index * 8] === hi && events.words[events.index * 8 + 1] === lo) {
      const v = events.words;
      const x = events.index * 8;
      const idAt = idAtOf(v, x);
      if (idAt < committed) {
        const kind = v[x + 4]! & 3;
        const a = kind === EV_PUT ? v[x + 5]! : kind === EV_REUSED ? (v[x + 4]! >>> 2) * TWO32 + v[x + 5]! : 0;
        group.push([kind, a, v[x + 6]!, v[x + 7]!, idAt]);
      }
      events.next();
    }
    if (group.length <= 1) {
      fold(group);
      continue;
    }
    // [kind, a, idLen, recLength, idAt]: ids sharing the hash, each folded apart (byte for byte: latin1 keeps every byte).
    const byId = new Map<string, number[][]>();
    for (const entry of group) {
      const id = idOf(entry[2]!, entry[4]!);
      const list = byId.get(id);
      if (list === undefined) byId.set(id, [entry]);
      else list.push(entry);
    }
    for (const entries of byId.values()) fold(entries);
  }
  return live;
}

/**
 * One pass over the postings file: each term's live postings; how many terms the puts taken interned (those past it
 * came from puts not taken); and the head's success by tag over the live puts (tag-tally.ts) — each mark term's
 * successes among its live postings, and the live puts with no mark, each put's success from its meta.
 */
export function termCounts(
  postings: ScratchFile,
  live: Live,
  puts: number,
  vocab: readonly string[],
  metas: Uint16Array,
): { df: Uint32Array; vocabCount: number; tally: TagTally } {
  const counts = new Uint32Array(vocab.length);
  const successes = new Uint32Array(vocab.length);
  const tagged = new Uint8Array(puts);
  let vocabCount = 0;
  for (const [w, n] of postingRuns(postings)) {
    for (let i = 0; i < n; i += 2) {
      const t = w[i]!;
      const ord = w[i + 1]!;
      if (ord >= puts) continue;
      if (t >= vocabCount) vocabCount = t + 1;
      if (!live.has(ord)) continue;
      counts[t]! += 1;
      if (!vocab[t]!.startsWith('#')) continue;
      tagged[ord] = 1;
      if (metaSuccess(metas[ord]!)) successes[t]! += 1;
    }
  }
  const marks: number[] = [];
  for (let t = 0; t < vocabCount; t++) if (vocab[t]!.startsWith('#')) marks.push(t, successes[t]!);
  let cases = 0;
  let won = 0;
  for (let ord = 0; ord < puts; ord++) {
    if (tagged[ord] === 1 || !live.has(ord)) continue;
    cases++;
    if (metaSuccess(metas[ord]!)) won++;
  }
  return { df: counts.slice(0, vocabCount), vocabCount, tally: { marks, untagged: [cases, won] } };
}

/** The postings file a read at a time: its words (term, ordinal per posting) and how many of them the read gave. */
function* postingRuns(postings: ScratchFile): Generator<[Uint32Array, number]> {
  const words = new Uint32Array(2 * POSTINGS_PER_READ);
  const bytes = new Uint8Array(words.buffer);
  for (let at = 0; at < postings.size; ) {
    const n = postings.read(bytes, at);
    if (n <= 0 || n % 8 !== 0) throw new RangeError('a scratch file came back short');
    yield [words, n / 4];
    at += n;
  }
}

/**
 * postStart, then postSlots and postMeta a range of terms at a time: each range one pass over the postings file,
 * each posting's meta its put's (`metas`, by ordinal).
 */
export function writePostings(
  put: Put,
  section: (put: Put, name: string) => Section,
  postings: ScratchFile,
  live: Live,
  df: Uint32Array,
  metas: Uint16Array,
  atOnce: number,
): void {
  const starts = section(put, 'postStart');
  const start = new Float64Array(df.length + 1);
  for (let t = 0; t < df.length; t++) {
    starts.u32(start[t]!);
    start[t + 1] = start[t]! + df[t]!;
  }
  starts.u32(start[df.length]!);
  starts.end();
  const slots = section(put, 'postSlots');
  const metaSection = section(put, 'postMeta');
  for (let t0 = 0; t0 < df.length; ) {
    let t1 = t0 + 1;
    while (t1 < df.length && start[t1 + 1]! - start[t0]! <= atOnce) t1 += 1;
    const base = start[t0]!;
    const slotOut = new Uint32Array(start[t1]! - base);
    const metaOut = new Uint16Array(slotOut.length);
    const cursor = new Float64Array(t1 - t0);
    for (let t = t0; t < t1; t++) cursor[t - t0] = start[t]! - base;
    if (slotOut.length > 0) {
      for (const [w, n] of postingRuns(postings)) {
        for (let i = 0; i < n; i += 2) {
          const t = w[i]!;
          if (t < t0 || t >= t1) continue;
          const ord = w[i + 1]!;
          if (!live.has(ord)) continue;
          const p = cursor[t - t0]!++;
          slotOut[p] = live.slot(ord);
          metaOut[p] = metas[ord]!;
        }
      }
    }
    slots.bytes(new Uint8Array(slotOut.buffer));
    metaSection.bytes(new Uint8Array(metaOut.buffer));
    t0 = t1;
  }
  slots.end();
  metaSection.end();
}
