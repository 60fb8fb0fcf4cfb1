// The case bank's columns as a replay cache stores them (whole, or read on demand from verified pages), the
// checks that refuse columns whose shapes disagree, and the 16-bit ranking facts kept beside each posting.
import type { Numbers } from './columns';

/** A bank as a replay cache stores it: every slot live, strings joined by "\n", postings in CSR form. */
export interface BankColumns {
  /** Case ids, UTF-8, joined by "\n"; slot s's id starts at byte idStarts[s]. Decoded one at a time, on demand. */
  readonly idBytes: Uint8Array;
  readonly idStarts: Uint32Array;
  readonly vocab: string[];
  readonly reward: Float64Array;
  readonly created: Float64Array;
  readonly success: Uint8Array;
  readonly reused: Float64Array;
  readonly termCount: Uint32Array;
  readonly recOffset: Float64Array;
  readonly recLength: Uint32Array;
  readonly recLine: Uint32Array;
  /** Slots of term t: postSlots[postStart[t] .. postStart[t + 1]). */
  readonly postStart: Uint32Array;
  readonly postSlots: Uint32Array;
  /** Beside each posting, what ranking asks of its slot first (packMeta): most candidates need no column read. */
  readonly postMeta: Uint16Array;
  /** (hash of the id, slot) pairs sorted by hash: a decoded bank finds a case id in O(log n). */
  readonly idHash: Uint32Array;
  readonly liveRecordBytes: number;
  /** Success by tag over these slots (tag-tally.ts), when the snapshot holds it. */
  readonly tagCounts?: TagTally | undefined;
  /** Whether created never decreases from slot to slot (a newest-first list is then the slots' order), when told. */
  readonly createdOrdered?: boolean | undefined;
  /** The slots ordered by created, by reward and by reused, ties by slot (key-order.ts); a snapshot always holds them. */
  readonly byCreated?: Uint32Array | undefined;
  readonly byReward?: Uint32Array | undefined;
  readonly byReused?: Uint32Array | undefined;
}

/**
 * The same columns read on demand from a snapshot's verified pages (codec.ts): a query reads the postings of its
 * terms and the numbers of its candidates, not the whole bank. The postings index alone is read whole.
 */
export type LazyColumns = {
  readonly [K in keyof BankColumns]: K extends 'idBytes'
    ? Bytes
    : K extends 'postSlots' | 'postMeta'
      ? Numbers & { slice(from: number, to: number): BankColumns[K] }
      : K extends 'postStart' | 'vocab' | 'liveRecordBytes' | 'tagCounts' | 'createdOrdered'
        ? BankColumns[K]
        : Numbers;
};

/**
 * A bank's state beyond the cache it was decoded from (Bank.changes): per slot folded since, its id and
 * numbers; the postings of those slots by term id; the terms met since (their ids follow the cache's); the
 * cached slots removed or re-counted since; and the counts that follow. Plain data: a delta file holds it.
 */
export interface BankChanges {
  readonly cachedSlots: number;
  readonly cachedTerms: number;
  readonly ids: readonly string[];
  readonly terms: readonly string[];
  readonly alive: readonly number[];
  readonly reward: readonly number[];
  readonly created: readonly number[];
  readonly success: readonly number[];
  readonly reused: readonly number[];
  readonly termCount: readonly number[];
  readonly recOffset: readonly number[];
  readonly recLength: readonly number[];
  readonly recLine: readonly number[];
  readonly postings: readonly (readonly [number, readonly number[]])[];
  readonly killed: readonly number[];
  readonly reusedCached: readonly (readonly [number, number])[];
  readonly liveCount: number;
  readonly liveRecordBytes: number;
}

/** What ranking and a result ask of a case: its id, its text's terms (task, then tags) and its numbers. */
export interface BankFacts {
  readonly id: string;
  readonly task: string;
  readonly tags: readonly string[];
  readonly reward: number;
  readonly created: number;
  readonly success: boolean;
  readonly reused: number;
  /**
   * Terms kept in the postings beside the case's terms, never ranked nor counted in its term count: one per tag
   * (tagMark), so that the bank counts a tag's cases exactly (a tag's words are terms of other cases too).
   */
  readonly marks?: readonly string[];
}

/**
 * A tag as a term of the postings: `#` and the tag's UTF-8 in base64url — never a word (words are letters and
 * digits), never a space or a newline (a database's term rows are split on spaces, the vocabulary on newlines).
 * Tags are plain on an encrypted store too (SPEC §13): a mark holds no free text.
 */
export const tagMark = (tag: string): string => `#${Buffer.from(tag, 'utf8').toString('base64url')}`;
/** The tag of a mark (tagMark), or undefined for a term that is not one. */
export const markedTag = (term: string): string | undefined => (term.startsWith('#') ? Buffer.from(term.slice(1), 'base64url').toString('utf8') : undefined);

/** A snapshot's tally: [mark term id, live successes] for each mark of its vocabulary in id order; then the untagged's. */
export interface TagTally {
  readonly marks: readonly number[];
  readonly untagged: readonly [cases: number, successes: number];
}

/**
 * Refuses a tally that does not fit its columns (RangeError): every mark of the vocabulary once, in order, each
 * with no more successes than postings; the untagged no more than the slots.
 */
function checkTally(t: TagTally, vocab: readonly string[], postStart: Uint32Array, slots: number): void {
  const whole = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
  const bad = () => new RangeError('inconsistent tag counts');
  if (!Array.isArray(t.marks) || t.marks.length % 2 !== 0 || !Array.isArray(t.untagged) || t.untagged.length !== 2) throw bad();
  const [cases, successes] = t.untagged;
  if (!whole(cases) || !whole(successes) || successes > cases || cases > slots) throw bad();
  let at = 0;
  for (let id = 0; id < vocab.length; id++) {
    if (!vocab[id]!.startsWith('#')) continue;
    const s = t.marks[at + 1];
    if (t.marks[at] !== id || !whole(s) || s! > postStart[id + 1]! - postStart[id]!) throw bad();
    at += 2;
  }
  if (at !== t.marks.length) throw bad();
}

/** Bytes read on demand. */
export interface Bytes {
  readonly length: number;
  slice(from: number, to: number): Uint8Array;
}

export const emptyColumns = (): BankColumns => ({
  idBytes: new Uint8Array(0),
  idStarts: new Uint32Array(0),
  vocab: [],
  reward: new Float64Array(0),
  created: new Float64Array(0),
  success: new Uint8Array(0),
  reused: new Float64Array(0),
  termCount: new Uint32Array(0),
  recOffset: new Float64Array(0),
  recLength: new Uint32Array(0),
  recLine: new Uint32Array(0),
  postStart: new Uint32Array(1),
  postSlots: new Uint32Array(0),
  postMeta: new Uint16Array(0),
  idHash: new Uint32Array(0),
  liveRecordBytes: 0,
});

/** The largest term count a meta holds exactly; at it, the termCount column has the true count. */
export const META_TERMS_MAX = 127;
/**
 * A slot's ranking facts in 16 bits: bit 15 success, bits 8–14 its term count (saturating at META_TERMS_MAX),
 * bits 0–7 its reward quantized downwards (floor(reward × 255)), so that a smaller quantum is a strictly
 * smaller reward: a candidate can lose on it without its exact reward being read.
 */
export const packMeta = (reward: number, termCount: number, success: boolean): number =>
  ((success ? 0x8000 : 0) | (Math.min(termCount, META_TERMS_MAX) << 8) | Math.max(0, Math.min(255, Math.floor(reward * 255)))) >>> 0;
export const metaTerms = (meta: number): number => (meta >>> 8) & 0x7f;
export const metaSuccess = (meta: number): boolean => (meta & 0x8000) !== 0;
export const metaReward = (meta: number): number => meta & 0xff;

/**
 * Refuses columns whose shapes disagree (a damaged or foreign cache). Postings are not visited one by one
 * (that would cost a replay's worth of time): a slot number out of range reads as undefined and is skipped.
 */
export function checkColumns(c: BankColumns | LazyColumns): void {
  const n = c.idStarts.length;
  const perSlot: { readonly length: number }[] = [c.reward, c.created, c.success, c.reused, c.termCount, c.recOffset, c.recLength, c.recLine];
  for (const order of [c.byCreated, c.byReward, c.byReused]) perSlot.push(order ?? { length: n });
  if (perSlot.some((column) => column.length !== n)) throw new RangeError('inconsistent columns');
  if (c.postStart.length !== c.vocab.length + 1 || c.postStart[c.vocab.length] !== c.postSlots.length || c.postMeta.length !== c.postSlots.length) {
    throw new RangeError('inconsistent postings');
  }
  for (let t = 0; t < c.vocab.length; t++) if (c.postStart[t]! > c.postStart[t + 1]!) throw new RangeError('inconsistent postings');
  // Columns read on demand come from checksummed pages: visiting every id would read them all.
  if (ArrayBuffer.isView(c.idStarts)) {
    const ids = c.idStarts;
    for (let s = 1; s < n; s++) if (ids[s]! <= ids[s - 1]!) throw new RangeError('inconsistent ids');
    if (n > 0 && ids[n - 1]! >= c.idBytes.length) throw new RangeError('inconsistent ids');
  }
  if (c.idHash.length !== 2 * n) throw new RangeError('inconsistent id hashes');
  if (c.tagCounts !== undefined) checkTally(c.tagCounts, c.vocab, c.postStart, n);
}
