// Whether a bank's created_at never decreases over its live slots in order (issue 47): then ordered by created,
// ties by slot, is the slots' own order, and a newest-first page by created reads the last live slots as a
// newest-first list does, not the whole created column. A snapshot's head says it of its slots (every one live);
// a bank decoded from it looks only at the slots folded since.
import type { Bank } from './bank';

/**
 * The snapshot's word and the live slots folded since: false when the snapshot does not tell (an older crux's) or
 * says no, though removals since may have made it so (a caller then sorts the column, as it would anyway).
 */
export function createdOrdered(bank: Bank): boolean {
  if (!(bank.cache.createdOrdered ?? bank.cachedSlots === 0)) return false;
  let last = Number.NEGATIVE_INFINITY;
  for (let s = bank.cachedSlots - 1; s >= 0; s--) {
    if (bank.alive.get(s) !== 1) continue;
    last = bank.created.get(s);
    break;
  }
  for (let s = bank.cachedSlots; s < bank.slots; s++) {
    if (bank.alive.get(s) !== 1) continue;
    const created = bank.created.get(s);
    if (!(created >= last)) return false;
    last = created;
  }
  return true;
}

/** Exactly whether created never decreases over the live slots (a snapshot's head): createdOrdered, else a look at each. */
export function liveCreatedOrdered(bank: Bank): boolean {
  if (createdOrdered(bank)) return true;
  const created = bank.created.range(0, bank.slots);
  const alive = bank.alive.range(0, bank.slots);
  let last = Number.NEGATIVE_INFINITY;
  for (let s = 0; s < created.length; s++) {
    if (alive[s] !== 1) continue;
    if (!(created[s]! >= last)) return false;
    last = created[s]!;
  }
  return true;
}
