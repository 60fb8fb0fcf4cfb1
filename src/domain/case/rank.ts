// Retrieval over the bank, exactly as SPEC §5 defines it: Jaccard over term sets, zero overlap excluded,
// ordered by similarity, reward, created_at (newest first), then case id.
import { invalid } from '../../shared/errors';
import type { CaseBank } from './bank';
import { META_TERMS_MAX, metaReward, metaSuccess, metaTerms } from './bank-layout';
import { tokenize } from './tokenize';

export const DEFAULT_TOP_K = 5;
export const MAX_TOP_K = 100;

export interface RetrieveQuery {
  readonly text: string;
  readonly topK: number;
  readonly onlySuccess: boolean;
  /** Keep only matches whose similarity is at least this (0 keeps every overlapping case). */
  readonly minSimilarity: number;
  /** Rank only the slots this accepts (a project's cases), so that top-k counts those alone. */
  readonly among?: (slot: number) => boolean;
}

export interface Hit {
  readonly slot: number;
  readonly similarity: number;
  /** The slot's packMeta (bank.ts): its reward's quantum decides most comparisons without a column read. */
  readonly meta: number;
}

/** Orders strings by code point (not UTF-16 unit), as Rust and Python do. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xAstral = x >= 0xd800 && x <= 0xdfff;
    const yAstral = y >= 0xd800 && y <= 0xdfff;
    // A surrogate starts a code point above U+FFFF: greater than any BMP unit, even U+E000…U+FFFF.
    if (xAstral !== yAstral) return xAstral ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Negative when hit `a` ranks before hit `b`. */
function compareHits(bank: CaseBank, a: Hit, b: Hit): number {
  if (a.similarity !== b.similarity) return b.similarity - a.similarity;
  // Different quanta are different rewards, in the same order: the exact rewards are read only on a tie.
  const qa = metaReward(a.meta),
    qb = metaReward(b.meta);
  if (qa !== qb) return qb - qa;
  const ra = bank.reward.get(a.slot),
    rb = bank.reward.get(b.slot);
  if (ra !== rb) return rb - ra;
  const ca = bank.created.get(a.slot),
    cb = bank.created.get(b.slot);
  if (ca !== cb) return cb - ca;
  return compareCodePoints(bank.idOf(a.slot), bank.idOf(b.slot));
}

/**
 * The best `topK` live cases for the query, best first. Reads the postings of the query's terms (each with
 * its slot's packMeta); a candidate's columns are read only when it ties with the worst kept hit on
 * similarity and reward quantum, so the cost follows the candidates, not the bank.
 */
export function rankCases(bank: CaseBank, query: RetrieveQuery): Hit[] {
  const queryTerms = tokenize(query.text);
  if (queryTerms.size === 0 || query.topK <= 0) return [];
  // Only cases in the postings of a query term can overlap: count shared terms per slot from those.
  const lists = [...queryTerms].flatMap((term) => {
    const id = bank.termIdOf(term);
    return id === undefined ? [] : [bank.postingsOf(id)];
  });
  const { alive } = bank;
  // Terms no case has still count in the union.
  const q = queryTerms.size;
  const best: Hit[] = [];
  eachCandidate(bank, lists, (slot, n, meta) => {
    if (alive.get(slot) === 0 || (query.onlySuccess && !metaSuccess(meta)) || (query.among !== undefined && !query.among(slot))) return;
    const terms = metaTerms(meta);
    const similarity = n / (q + (terms < META_TERMS_MAX ? terms : bank.termCount.get(slot)) - n);
    if (similarity < query.minSimilarity) return;
    // Most candidates lose to the worst kept hit on similarity or reward quantum alone: no column read.
    if (best.length === query.topK) {
      const worst = best[best.length - 1]!;
      if (similarity < worst.similarity || (similarity === worst.similarity && metaReward(meta) < metaReward(worst.meta))) return;
    }
    offer(bank, best, { slot, similarity, meta }, query.topK);
  });
  return best;
}

type Postings = ReturnType<CaseBank['postingsOf']>;

/** Past one posting per this many slots, counts go into arrays the size of the bank rather than a sorted list. */
const DENSE_AFTER_SHARE = 16;

/**
 * Visits each slot in the postings `lists` once, with how many of the lists hold it and its packMeta. A slot
 * out of range (a damaged cache) is passed over.
 */
function eachCandidate(bank: CaseBank, lists: readonly Postings[], visit: (slot: number, shared: number, meta: number) => void): void {
  const total = lists.reduce((sum, list) => sum + list.cached.length + list.later.length, 0);
  if (total * DENSE_AFTER_SHARE > bank.slots) {
    denseCandidates(bank, lists, visit);
    return;
  }
  const keys = postingKeys(bank, lists, total);
  for (let i = 0; i < keys.length; ) {
    // A run of equal slots: one posting per list that holds the slot.
    const slot = Math.floor(keys[i]! / META_SPAN);
    const meta = keys[i]! - slot * META_SPAN;
    let n = 1;
    for (i += 1; i < keys.length && Math.floor(keys[i]! / META_SPAN) === slot; i++) n += 1;
    visit(slot, n, meta);
  }
}

/** Slot × META_SPAN + meta: a posting as one number (slots < 2^32, metas < 2^16: exact in a double). */
const META_SPAN = 0x10000;

/**
 * Every posting of `lists` as slot × META_SPAN + its slot's packMeta, sorted, so that the postings of one slot
 * are adjacent: counting shared terms is one pass over a typed array (no map of candidates to build and
 * collect, which cost ~1.5 µs a candidate, mostly in the collector).
 */
function postingKeys(bank: CaseBank, lists: readonly Postings[], total: number): Float64Array {
  const keys = new Float64Array(total);
  const slots = bank.slots;
  let k = 0;
  for (const { cached, cachedMeta, later } of lists) {
    for (let i = 0; i < cached.length; i++) if (cached[i]! < slots) keys[k++] = cached[i]! * META_SPAN + cachedMeta[i]!;
    for (const slot of later) keys[k++] = slot * META_SPAN + bank.metaOf(slot);
  }
  return keys.subarray(0, k).sort();
}

/** Counts in arrays the size of the bank: for queries whose postings cover a good share of it (common words). */
function denseCandidates(bank: CaseBank, lists: readonly Postings[], visit: (slot: number, shared: number, meta: number) => void): void {
  const slots = bank.slots;
  const shared = new Uint32Array(slots);
  const metas = new Int32Array(slots);
  const touched: number[] = [];
  const count = (slot: number, meta: number) => {
    const before = shared[slot];
    if (before === undefined) return;
    if (before === 0) {
      touched.push(slot);
      metas[slot] = meta;
    }
    shared[slot] = before + 1;
  };
  for (const { cached, cachedMeta, later } of lists) {
    for (let i = 0; i < cached.length; i++) count(cached[i]!, cachedMeta[i]!);
    for (const slot of later) if (slot < slots) count(slot, bank.metaOf(slot));
  }
  for (const slot of touched) visit(slot, shared[slot]!, metas[slot]!);
}

// Keeps `best` sorted and at most k long: most candidates lose to the worst kept one and cost one compare.
function offer(bank: CaseBank, best: Hit[], hit: Hit, k: number): void {
  if (best.length === k && compareHits(bank, hit, best[k - 1]!) >= 0) return;
  let i = best.length;
  if (i === k) i -= 1;
  else best.push(hit);
  while (i > 0 && compareHits(bank, hit, best[i - 1]!) < 0) {
    best[i] = best[i - 1]!;
    i -= 1;
  }
  best[i] = hit;
}

/** `--top-k`: a whole number ≥ 0; larger than MAX_TOP_K is capped, not refused. */
export function parseTopK(raw: string, what = '--top-k'): number {
  const text = raw.trim();
  if (!/^\+?\d+$/.test(text)) throw invalid(`${what} must be a whole number ≥ 0, not ${JSON.stringify(raw)}`, `at most ${MAX_TOP_K} results are returned`);
  return Math.min(Number(text), MAX_TOP_K);
}

/** `--min-similarity`: a number in [0, 1]. */
export function parseMinSimilarity(raw: string, what = '--min-similarity'): number {
  const text = raw.trim();
  const n = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 0 && n <= 1)) throw invalid(`${what} must be a number from 0 to 1, not ${JSON.stringify(raw)}`);
  return n;
}
