// The first index of a sorted column of 32-bit keys holding a key at least `key`: the bank's id lookup over
// the (hash, slot) pairs a snapshot holds, which a query reads page by page (layout.ts), each page a
// positioned read and a checksum. The keys are hashes, spread evenly over 32 bits, so the search starts where
// the key would fall (interpolation), gallops from there to a bracket and bisects it: at 1M pairs it reads ~2
// pages, where bisection of the whole column reads ~12. Keys that are not spread evenly (collisions, a crafted
// id) cost at most about twice bisection's probes. (The session index's page search, SortedTable.firstPageFrom,
// places probes the same way over pages of 64-bit keys it compares exactly, ending at the first page that holds
// the key; this one reads single 32-bit keys of a column.)

/** The least i in [0, n) with keyAt(i) >= key (keyAt non-decreasing, keys in [0, 2^32)), or n when none is. */
export function firstAtLeast(keyAt: (i: number) => number, n: number, key: number): number {
  if (n === 0) return 0;
  const guess = Math.min(n - 1, Math.max(0, Math.floor((key / 2 ** 32) * n)));
  // Invariant from here: keyAt(i) < key for i < lo, keyAt(i) >= key for i >= hi.
  let lo: number;
  let hi: number;
  if (keyAt(guess) < key) {
    lo = guess + 1;
    hi = n;
    for (let step = 1; lo < hi; step *= 2) {
      const probe = lo + step - 1;
      if (probe >= n) break;
      if (keyAt(probe) >= key) {
        hi = probe;
        break;
      }
      lo = probe + 1;
    }
  } else {
    lo = 0;
    hi = guess;
    for (let step = 1; lo < hi; step *= 2) {
      const probe = hi - step;
      if (probe < 0) break;
      if (keyAt(probe) < key) {
        lo = probe + 1;
        break;
      }
      hi = probe;
    }
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
