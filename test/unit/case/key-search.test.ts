// The bank's id lookup (key-search.ts): the same index as a linear scan on every sorted column, and few probes
// (so few snapshot pages) where the keys are hashes, never many more than bisection where they are not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstAtLeast } from '../../../src/journal/derived/bank/key-search';

const linear = (keys: readonly number[], key: number) => {
  const i = keys.findIndex((k) => k >= key);
  return i === -1 ? keys.length : i;
};

/** firstAtLeast over `keys`, with how many keys it read and on how many pages (512 pairs to a 4 KiB page). */
function search(keys: ArrayLike<number>, key: number) {
  let probes = 0;
  const pages = new Set<number>();
  const at = firstAtLeast(
    (i) => {
      probes += 1;
      pages.add(Math.floor(i / 512));
      if (!(i >= 0 && i < keys.length)) throw new Error(`probe ${i} outside 0..${keys.length - 1}`);
      return keys[i]!;
    },
    keys.length,
    key,
  );
  return { at, probes, pages: pages.size };
}

const u32 = fc.integer({ min: 0, max: 2 ** 32 - 1 });
// Columns of every shape: spread, clustered in a few values, runs of one key, the extremes.
const column = fc.oneof(
  fc.array(u32, { maxLength: 300 }),
  fc.array(fc.constantFrom(0, 1, 7, 2 ** 31, 2 ** 32 - 2, 2 ** 32 - 1), { maxLength: 300 }),
  fc.array(fc.integer({ min: 1000, max: 1010 }), { maxLength: 300 }),
  fc.array(
    fc.integer({ min: 0, max: 30 }).map((e) => 2 ** e),
    { maxLength: 300 },
  ),
);

describe('firstAtLeast', () => {
  it('answers the linear scan’s index for every sorted column and key, reading only keys inside it', () => {
    fc.assert(
      fc.property(column, fc.oneof(u32, fc.constantFrom(0, 1, 1000, 1005, 2 ** 32 - 1)), (unsorted, key) => {
        const keys = [...unsorted].sort((a, b) => a - b);
        expect(search(keys, key).at).toBe(linear(keys, key));
        // Every key of the column, looked up itself and just above it.
        for (const k of keys.slice(0, 20)) {
          expect(search(keys, k).at).toBe(linear(keys, k));
          expect(search(keys, k + 1).at).toBe(linear(keys, k + 1));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reads ~2 pages of a million spread hashes, where bisection reads ~12', () => {
    // Hashes of ids, as the bank's column holds them: spread over 32 bits, sorted.
    let seed = 42;
    const next = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
    const keys = new Uint32Array(1_000_000).map(() => next()).sort();
    const pages: number[] = [];
    for (let q = 0; q < 2000; q++) {
      const key = q % 2 ? keys[next() % keys.length]! : next();
      const found = search(keys, key);
      expect(found.at === keys.length || keys[found.at]! >= key).toBe(true);
      expect(found.at === 0 || keys[found.at - 1]! < key).toBe(true);
      pages.push(found.pages);
    }
    expect(pages.reduce((a, b) => a + b, 0) / pages.length).toBeLessThan(2.5);
    expect(Math.max(...pages)).toBeLessThanOrEqual(5);
  });

  it('costs at most about twice bisection on keys that are not spread (powers, one cluster and an outlier)', () => {
    const powers = Array.from({ length: 4096 }, (_, i) => Math.floor((i / 4096) ** 8 * (2 ** 32 - 1)));
    const cluster = [...Array.from({ length: 4095 }, (_, i) => i), 2 ** 32 - 1];
    for (const keys of [powers, cluster]) {
      const bound = 2 * (Math.ceil(Math.log2(keys.length)) + 1);
      for (let q = 0; q < keys.length; q += 7) {
        const { at, probes } = search(keys, keys[q]!);
        expect(at).toBe(linear(keys, keys[q]!));
        expect(probes).toBeLessThanOrEqual(bound);
      }
    }
  });
});
