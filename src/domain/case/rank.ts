// Retrieval over the bank, exactly as SPEC §5 defines it: Jaccard over term sets, zero overlap excluded,
// ordered by similarity, reward, created_at (newest first), then case id.
import { invalid } from '../../shared/errors';
import type { CaseBank } from './bank';
import { META_TERMS_MAX, metaReward, metaSuccess, metaTerms } from '../../journal/derived/bank/layout';
import { indexTerms } from './sealed';

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
  const queryTerms = indexTerms(query.text);
  if (queryTerms.size === 0 || query.topK <= 0) return [];
  // Only cases in the postings of a query term can overlap: count shared terms per slot from those.
  const lists = [...queryTerms].flatMap((term) => {
    const id = bank.termIdOf(term);
    return id === undefined ? [] : [bank.postingsOf(id)];
  });
  // Terms no case has still count in the union.
  const q = queryTerms.size;
  const total = lists.reduce((sum, list) => sum + list.cached.length + list.later.length, 0);
  if (total * DENSE_AFTER_SHARE > bank.slots) return rankDense(bank, lists, query, q);
  return rankSparse(bank, postingKeys(bank, lists, total), query, q);
}

type Postings = ReturnType<CaseBank['postingsOf']>;

/** Past one posting per this many slots, counts go into arrays the size of the bank rather than a sorted list. */
const DENSE_AFTER_SHARE = 16;

/** The similarity of a slot sharing `n` of the query's `q` terms, or -1 when the query's filters leave it out. */
function similarityOf(bank: CaseBank, query: RetrieveQuery, q: number, slot: number, n: number, meta: number): number {
  if (bank.alive.get(slot) === 0 || (query.onlySuccess && !metaSuccess(meta)) || (query.among !== undefined && !query.among(slot))) return -1;
  const terms = metaTerms(meta);
  const similarity = n / (q + (terms < META_TERMS_MAX ? terms : bank.termCount.get(slot)) - n);
  return similarity < query.minSimilarity ? -1 : similarity;
}

/**
 * Ranks from the sorted posting keys (postingKeys) in plain loops over typed arrays, each a small function of
 * its own: a rare word's thousands of candidates cost arithmetic and no call each, and what V8 optimizes in
 * the middle of the retrieve is a few lines (a loop that calls out, run that often, cost ~30 M instructions
 * to optimize). First each candidate's similarity, then the topK-th best of them (a native sort of a copy);
 * only the candidates at or above it are offered, exactly as every candidate was before.
 */
function rankSparse(bank: CaseBank, keys: Float64Array, query: RetrieveQuery, q: number): Hit[] {
  const sims = new Float64Array(keys.length);
  const picked = new Float64Array(keys.length);
  const saturated: number[] = [];
  // Every slot live and no filter to call: the similarity from the posting's meta alone.
  const d =
    bank.liveCount === bank.slots && query.among === undefined
      ? plainSimilarities(keys, q, query.onlySuccess, query.minSimilarity, sims, picked, saturated)
      : filteredSimilarities(bank, keys, query, q, sims, picked);
  let left = d;
  // A meta's term count saturates at META_TERMS_MAX: those take the exact count from the column.
  for (const c of saturated) {
    const slot = Math.floor(picked[c]! / META_SPAN);
    const similarity = similarityOf(bank, query, q, slot, -sims[c]!, picked[c]! - slot * META_SPAN);
    sims[c] = similarity;
    if (similarity < 0) left -= 1;
  }
  // Every hit of the best k has at least the k-th best similarity (left out: below 0, sorted first).
  const k = query.topK;
  const floor = left <= k ? 0 : sims.slice(0, d).sort()[d - k]!;
  return offerFrom(bank, sims, picked, d, floor, k);
}

/**
 * Writes each slot's similarity (and its key) for the slots the query keeps, from the posting metas alone;
 * a saturated meta's slot gets minus its shared count, and its index goes into `saturated`. Returns how many.
 */
function plainSimilarities(
  keys: Float64Array,
  q: number,
  onlySuccess: boolean,
  min: number,
  sims: Float64Array,
  picked: Float64Array,
  saturated: number[],
): number {
  let d = 0;
  for (let i = 0; i < keys.length; ) {
    // A run of one slot's keys: one posting per list that holds the slot.
    const key = keys[i]!;
    const slot = Math.floor(key / META_SPAN);
    const meta = key - slot * META_SPAN;
    const next = (slot + 1) * META_SPAN;
    let j = i + 1;
    while (j < keys.length && keys[j]! < next) j++;
    const n = j - i;
    i = j;
    if (onlySuccess && (meta & 0x8000) === 0) continue;
    const terms = (meta >>> 8) & 0x7f;
    if (terms === META_TERMS_MAX) {
      saturated.push(d);
      sims[d] = -n;
    } else {
      const similarity = n / (q + terms - n);
      if (similarity < min) continue;
      sims[d] = similarity;
    }
    picked[d] = key;
    d++;
  }
  return d;
}

/** As plainSimilarities, each candidate through similarityOf (a bank with dead slots, a query with `among`). */
function filteredSimilarities(bank: CaseBank, keys: Float64Array, query: RetrieveQuery, q: number, sims: Float64Array, picked: Float64Array): number {
  let d = 0;
  for (let i = 0; i < keys.length; ) {
    const key = keys[i]!;
    const slot = Math.floor(key / META_SPAN);
    const next = (slot + 1) * META_SPAN;
    let j = i + 1;
    while (j < keys.length && keys[j]! < next) j++;
    const similarity = similarityOf(bank, query, q, slot, j - i, key - slot * META_SPAN);
    i = j;
    if (similarity < 0) continue;
    sims[d] = similarity;
    picked[d] = key;
    d++;
  }
  return d;
}

/** The best k of the first `d` candidates whose similarity is at least `floor` (and not below 0). */
function offerFrom(bank: CaseBank, sims: Float64Array, picked: Float64Array, d: number, floor: number, k: number): Hit[] {
  const best: Hit[] = [];
  for (let c = 0; c < d; c++) {
    const similarity = sims[c]!;
    if (similarity < floor || similarity < 0) continue;
    const slot = Math.floor(picked[c]! / META_SPAN);
    consider(bank, best, { slot, similarity, meta: picked[c]! - slot * META_SPAN }, k);
  }
  return best;
}

/** Offers a hit unless it loses to the worst kept one on similarity or reward quantum alone (no column read). */
function consider(bank: CaseBank, best: Hit[], hit: Hit, k: number): void {
  if (best.length === k) {
    const worst = best[k - 1]!;
    if (hit.similarity < worst.similarity || (hit.similarity === worst.similarity && metaReward(hit.meta) < metaReward(worst.meta))) return;
  }
  offer(bank, best, hit, k);
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
function rankDense(bank: CaseBank, lists: readonly Postings[], query: RetrieveQuery, q: number): Hit[] {
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
  const best: Hit[] = [];
  for (const slot of touched) {
    const similarity = similarityOf(bank, query, q, slot, shared[slot]!, metas[slot]!);
    if (similarity >= 0) consider(bank, best, { slot, similarity, meta: metas[slot]! }, query.topK);
  }
  return best;
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
