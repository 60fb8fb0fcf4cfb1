// The sparse ranking's WebAssembly kernel (rank-wasm.ts) against the JS loops it stands in for: the same hits,
// in the same order, for banks replayed and decoded from a cache (later slots past the cached ones), rewards
// that tie, saturated term counts, --only-success and --min-similarity; and a Node without WebAssembly ranks
// through the JS loops alone.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { decodeBank, encodeBank } from '../../../src/domain/case/bank-codec';
import type { CaseBank } from '../../../src/domain/case/bank';
import type { RetrieveQuery } from '../../../src/domain/case/rank';
import { bankOf, bodyOf, recorded, type Given } from './fixtures';

type Rank = typeof import('../../../src/domain/case/rank').rankCases;

/**
 * rankCases from a fresh module graph, with WebAssembly present or hidden when the kernel is first asked for
 * (it is loaded once, then kept, as in a Node without WebAssembly): the kernel's own answer for a sparse bank
 * says which one ranks.
 */
async function rankWith(wasm: boolean): Promise<Rank> {
  vi.resetModules();
  if (!wasm) vi.stubGlobal('WebAssembly', undefined);
  try {
    const { rankCases } = await import('../../../src/domain/case/rank');
    const { keptCandidates } = await import('../../../src/domain/case/rank-wasm');
    const bank = bankOf([...FILLER, recorded({ id: 'c_probe', task: 'rare' })]);
    const probe = () => keptCandidates(bank, [bank.postingsOf(bank.termIdOf('rare')!)], 1, 1, { topK: 1, onlySuccess: false, minSimilarity: 0 });
    expect(probe() === undefined).toBe(!wasm);
    vi.unstubAllGlobals();
    expect(probe() === undefined).toBe(!wasm);
    return rankCases;
  } finally {
    vi.unstubAllGlobals();
  }
}

const WORDS = ['rare', 'seldom', 'odd', 'deploy', 'cache', 'timeout', 'page'];
// Past 127 distinct terms a posting's meta saturates: the kernel leaves such a query to the JS loops.
const LONG = Array.from({ length: 130 }, (_, i) => `long${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(' ');
// Cases no query word reaches: the query's postings are a small share of the bank (the sparse path).
const FILLER: Given[] = Array.from({ length: 1500 }, (_, i) =>
  recorded({ id: `c_fill${i}`, task: `filler${i} padding`, reward: 1, success: true, created: '2026-01-01T00:00:00.000Z' }),
);

describe('the sparse ranking in WebAssembly', () => {
  it('ranks exactly as the JS loops do, replayed or decoded from a cache (property)', async () => {
    const withWasm = await rankWith(true);
    const withoutWasm = await rankWith(false);
    const caseArb = fc.record({
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
      long: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      reward: fc.constantFrom(0, 0.5, 0.5 + 1e-9, 1 / 255, 1),
      success: fc.boolean(),
      created: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'),
    });
    fc.assert(
      fc.property(
        fc.array(caseArb, { minLength: 1, maxLength: 16 }),
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        fc.constantFrom(0, 0.2, 0.4),
        fc.nat(),
        (cases, words, topK, onlySuccess, minSimilarity, cutAt) => {
          const events = [
            ...FILLER,
            ...cases.map((c, i) =>
              recorded({ id: `c_${i}`, task: `${c.words.join(' ')}${c.long ? ` ${LONG}` : ''}`, reward: c.reward, success: c.success, created: c.created }),
            ),
          ];
          const cut = FILLER.length + (cutAt % (cases.length + 1));
          const banks: CaseBank[] = [bankOf(events), bankOf(events.slice(cut), decodeBank(bodyOf(encodeBank(bankOf(events.slice(0, cut)))))!)];
          const query: RetrieveQuery = { text: words.join(' '), topK, onlySuccess, minSimilarity };
          for (const bank of banks) {
            const ids = (rank: Rank) => rank(bank, query).map((h) => [bank.idOf(h.slot), h.similarity]);
            expect(ids(withWasm)).toEqual(ids(withoutWasm));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('is used for a rare word in a large bank, and a Node without WebAssembly gets the same answer', async () => {
    const events = [...FILLER, recorded({ id: 'c_x', task: 'rare deploy', reward: 0.5 }), recorded({ id: 'c_y', task: 'rare', reward: 0.5 })];
    const bank = bankOf(events);
    const query: RetrieveQuery = { text: 'rare deploy', topK: 5, onlySuccess: false, minSimilarity: 0 };
    const wasm = await rankWith(true);
    const js = await rankWith(false);
    const expected = [
      ['c_x', 1],
      ['c_y', 0.5],
    ];
    expect(wasm(bank, query).map((h) => [bank.idOf(h.slot), h.similarity])).toEqual(expected);
    expect(js(bank, query).map((h) => [bank.idOf(h.slot), h.similarity])).toEqual(expected);
  });
});
