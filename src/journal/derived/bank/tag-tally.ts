// Success by tag kept with the bank (issue 47): each tag's live cases and successes, and those of the cases
// without a tag. A snapshot's head holds them for its slots (TagTally: every one of its slots is live); a bank
// decoded from it counts them now from that tally and what changed since (the cached slots removed, found in
// their tags' postings by a search; the slots folded since, from their postings) — what the delta holds, never
// a pass over every tag's postings. Without a tally (an older snapshot) the pass is the answer (tagCountsByPostings).
import type { Bank } from './bank';
import type { Numbers } from './columns';
import { metaSuccess, type TagTally } from './layout';

export interface TagCount {
  readonly id: number;
  readonly cases: number;
  readonly successes: number;
}

export interface TagCounts {
  /** Each mark term of the vocabulary (term id order), live or not. */
  readonly marks: TagCount[];
  readonly untagged: { readonly cases: number; readonly successes: number };
}

const isMark = (term: string) => term.startsWith('#');

/** Whether `slot` is among postSlots[from..to) (slots ascending). */
function holdsSlot(slots: Numbers | Uint32Array, from: number, to: number, slot: number): boolean {
  const postSlots = ArrayBuffer.isView(slots) ? { get: (i: number) => slots[i]! } : slots;
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (postSlots.get(mid) < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo < to && postSlots.get(lo) === slot;
}

/** The live counts from the snapshot's tally and the changes since; undefined without a tally (or removals it cannot tell). */
function tagCountsFromTally(bank: Bank): TagCounts | undefined {
  const cache = bank.cache;
  const base = cache.tagCounts ?? (bank.cachedSlots === 0 ? { marks: [], untagged: [0, 0] as const } : undefined);
  const overlaid = bank.alive.overlaid();
  if (base === undefined || overlaid === undefined) return undefined;
  const killed: number[] = [];
  for (const [slot, alive] of overlaid) if (alive === 0 && slot < bank.cachedSlots) killed.push(slot);
  const killedTagged = new Set<number>();
  const later = (bank.slots > bank.cachedSlots ? new Uint8Array(bank.slots - bank.cachedSlots) : undefined) ?? new Uint8Array(0);
  const marks: TagCount[] = [];
  const count = (id: number, cases: number, successes: number, from: number, to: number) => {
    for (const slot of killed) {
      if (!holdsSlot(cache.postSlots, from, to, slot)) continue;
      killedTagged.add(slot);
      cases--;
      if (bank.success.get(slot) === 1) successes--;
    }
    for (const slot of bank.laterPostingsOf(id)) {
      if (bank.alive.get(slot) !== 1) continue;
      later[slot - bank.cachedSlots] = 1;
      cases++;
      if (bank.success.get(slot) === 1) successes++;
    }
    marks.push({ id, cases, successes });
  };
  for (let i = 0; i < base.marks.length; i += 2) {
    const id = base.marks[i]!;
    const from = cache.postStart[id]!;
    const to = cache.postStart[id + 1]!;
    count(id, to - from, base.marks[i + 1]!, from, to);
  }
  for (let id = cachedTerms(bank); id < bank.vocab.length; id++) if (isMark(bank.vocab[id]!)) count(id, 0, 0, 0, 0);
  let [cases, successes] = base.untagged;
  for (const slot of killed) {
    if (killedTagged.has(slot)) continue;
    cases--;
    if (bank.success.get(slot) === 1) successes--;
  }
  for (let slot = bank.cachedSlots; slot < bank.slots; slot++) {
    if (later[slot - bank.cachedSlots] === 1 || bank.alive.get(slot) !== 1) continue;
    cases++;
    if (bank.success.get(slot) === 1) successes++;
  }
  return { marks, untagged: { cases, successes } };
}

/** How many terms the snapshot's vocabulary held: the cache's postings index has one more entry. */
const cachedTerms = (bank: Bank) => bank.cache.postStart.length - 1;

/** The live counts by one pass over every tag's postings and every slot (a snapshot without a tally). */
function tagCountsByPostings(bank: Bank): TagCounts {
  const tagged = new Uint8Array(bank.slots);
  const marks: TagCount[] = [];
  for (let id = 0; id < bank.vocab.length; id++) {
    if (!isMark(bank.vocab[id]!)) continue;
    const { cached, cachedMeta, later } = bank.postingsOf(id);
    let cases = 0;
    let successes = 0;
    // A cached posting carries its slot's success (packMeta): no column read for it.
    for (let i = 0; i < cached.length; i++) {
      const slot = cached[i]!;
      if (bank.alive.get(slot) !== 1) continue;
      tagged[slot] = 1;
      cases++;
      if (metaSuccess(cachedMeta[i]!)) successes++;
    }
    for (const slot of later) {
      if (bank.alive.get(slot) !== 1) continue;
      tagged[slot] = 1;
      cases++;
      if (bank.success.get(slot) === 1) successes++;
    }
    marks.push({ id, cases, successes });
  }
  let cases = 0;
  let successes = 0;
  for (let slot = 0; slot < bank.slots; slot++) {
    if (tagged[slot] === 1 || bank.alive.get(slot) !== 1) continue;
    cases++;
    if (bank.success.get(slot) === 1) successes++;
  }
  return { marks, untagged: { cases, successes } };
}

/** The live counts: from the tally where there is one, else by the pass. */
export const tagCounts = (bank: Bank): TagCounts => tagCountsFromTally(bank) ?? tagCountsByPostings(bank);

/** What a snapshot of this bank's live slots holds (its head). */
export function tallyOf(counts: TagCounts): TagTally {
  return { marks: counts.marks.flatMap((m) => [m.id, m.successes]), untagged: [counts.untagged.cases, counts.untagged.successes] };
}
