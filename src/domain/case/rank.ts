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
  const total = lists.reduce((sum, list) => sum + list.cached.length + list.later.length, 0);
  const tally = total * DENSE_AFTER_SHARE > bank.slots ? denseTally(bank.slots) : sparseTally(bank.slots);
  for (const { cached, cachedMeta, later } of lists) {
    for (let i = 0; i < cached.length; i++) tally.count(cached[i]!, cachedMeta[i]!);
    for (const slot of later) tally.count(slot, -1);
  }
  const { alive } = bank;
  // Terms no case has still count in the union.
  const q = queryTerms.size;
  const best: Hit[] = [];
  tally.each((slot, n, cachedMeta) => {
    const meta = cachedMeta < 0 ? bank.metaOf(slot) : cachedMeta;
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

/** Shared-term counts per candidate slot, with the meta its posting carried (-1: none, a slot folded later). */
interface Tally {
  count(slot: number, meta: number): void;
  each(visit: (slot: number, shared: number, meta: number) => void): void;
}

/** Past one posting per this many slots, counts go into arrays the size of the bank rather than maps. */
const DENSE_AFTER_SHARE = 16;

function sparseTally(slots: number): Tally {
  const counts = new Map<number, [number, number]>();
  return {
    count(slot, meta) {
      if (!(slot < slots)) return; // a slot out of range: a damaged cache
      const seen = counts.get(slot);
      if (seen === undefined) counts.set(slot, [1, meta]);
      else seen[0] += 1;
    },
    each(visit) {
      for (const [slot, [n, meta]] of counts) visit(slot, n, meta);
    },
  };
}

function denseTally(slots: number): Tally {
  const shared = new Uint32Array(slots);
  const metas = new Int32Array(slots);
  const touched: number[] = [];
  return {
    count(slot, meta) {
      const before = shared[slot];
      if (before === undefined) return; // a slot out of range: a damaged cache
      if (before === 0) {
        touched.push(slot);
        metas[slot] = meta;
      }
      shared[slot] = before + 1;
    },
    each(visit) {
      for (const slot of touched) visit(slot, shared[slot]!, metas[slot]!);
    },
  };
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
