// The bank's stepwise encoder (journal/derived/bank/steps.ts): its steps, concatenated, are exactly encodeBank's bytes, whatever the
// budget, with cached cases removed, replaced, re-counted and new ones folded since; each step stays near its budget.
import { describe, expect, it } from 'vitest';
import type { CaseBank } from '../../../src/domain/case/bank';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { decodeCaseBank } from '../../../src/domain/case/bank';
import { stepBank } from '../../../src/journal/derived/bank/steps';
import { bankOf, bodyOf, recorded, type Given } from './fixtures';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta', '東京', 'zeta'];
const task = (i: number) => `${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} ${WORDS[(i * 3 + 1) % 10]} w${i % 37}`;

/** A bank decoded from a snapshot of `n` cases, then `later` events folded into it. */
function decodedWith(n: number, later: (i: number) => Given | undefined, count: number): CaseBank {
  const base = bankOf(Array.from({ length: n }, (_, i) => recorded({ id: `c_${i}`, task: task(i), reward: (i % 10) / 10, success: i % 4 !== 0 })));
  const events: Given[] = [];
  for (let i = 0; i < count; i++) {
    const e = later(i);
    if (e !== undefined) events.push(e);
  }
  return bankOf(events, decodeCaseBank(bodyOf(encodeBank(base)))!);
}

/** Runs the steps to the end; the bytes of each and their concatenation. */
function stepped(bank: CaseBank, budget: number): { whole: Buffer; sizes: number[]; lengths: (number | undefined)[] } {
  const pieces: Buffer[] = [];
  const lengths: (number | undefined)[] = [];
  let cursor: unknown;
  for (let guard = 0; guard < 100_000; guard++) {
    // Through JSON, as the cursor is kept between processes.
    const out = stepBank(bank, cursor === undefined ? undefined : JSON.parse(JSON.stringify(cursor)), budget);
    if (out === undefined) throw new Error('gave up');
    pieces.push(Buffer.from(out.bytes));
    lengths.push(out.length);
    if (out.done) return { whole: Buffer.concat(pieces), sizes: pieces.map((p) => p.length), lengths };
    cursor = out.next;
  }
  throw new Error('no end');
}

const mixed = (i: number): Given | undefined => {
  switch (i % 6) {
    case 0:
      return recorded({ id: `n_${i}`, task: `${task(i)} fresh${i % 5}`, reward: 0.3 });
    case 1:
      return { ev: 'case.deleted', data: { case_id: `c_${(i * 13) % 500}` } };
    case 2:
      return { ev: 'case.reused', data: { case_id: `c_${(i * 17) % 500}`, times_reused: i } };
    case 3:
      return recorded({ id: `c_${(i * 7) % 500}`, task: `replaced ${task(i + 1)}` });
    case 4:
      return { ev: 'case.deleted', data: { case_id: `n_${i - 4}` } };
    default:
      return { ev: 'case.reused', data: { case_id: `n_${i - 5}`, times_reused: 2 } };
  }
};

describe('the stepwise bank encoder', () => {
  it.each([64, 1000, 4096, 1 << 20])('gives encodeBank’s bytes with cached cases removed, replaced and re-counted (budget %i)', (budget) => {
    const bank = decodedWith(500, mixed, 120);
    const { whole, lengths } = stepped(bank, budget);
    const expected = encodeBank(bank);
    expect(whole.equals(expected)).toBe(true);
    expect(lengths.filter((l) => l !== undefined).every((l) => l === expected.length)).toBe(true);
  });

  it('gives encodeBank’s bytes with only new cases and counts (no cached slot removed)', () => {
    const bank = decodedWith(
      300,
      (i) => (i % 2 === 0 ? recorded({ id: `n_${i}`, task: task(i) }) : { ev: 'case.reused', data: { case_id: `c_${i}`, times_reused: 9 } }),
      50,
    );
    expect(stepped(bank, 512).whole.equals(encodeBank(bank))).toBe(true);
  });

  it('gives encodeBank’s bytes for a bank with every cached case removed, and for an empty one', () => {
    const gone = decodedWith(40, (i) => ({ ev: 'case.deleted', data: { case_id: `c_${i}` } }), 40);
    expect(stepped(gone, 256).whole.equals(encodeBank(gone))).toBe(true);
    const empty = decodedWith(0, () => undefined, 0);
    expect(stepped(empty, 256).whole.equals(encodeBank(empty))).toBe(true);
  });

  it('keeps each step near its budget: no step writes the whole body', () => {
    const bank = decodedWith(2000, mixed, 300);
    const { sizes, whole } = stepped(bank, 4096);
    expect(sizes.length).toBeGreaterThan(10);
    // A step stops at the first slice boundary past its budget (a slice: budget / 8 numbers); the vocabulary is written whole.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2 * 4096 + 1024);
    expect(Math.max(...sizes)).toBeLessThan(whole.length / 2);
  });

  it('keeps the live slots by created, reward and reused (ties by slot) through removals, replacements and counts set since', () => {
    let bank = decodedWith(500, mixed, 120);
    // Twice: the second time from the orders the first snapshot kept.
    for (let round = 0; round < 2; round++) {
      const decoded = decodeCaseBank(bodyOf(encodeBank(bank)))!;
      const slots = Array.from({ length: decoded.slots }, (_, s) => s);
      for (const [key, section] of [
        ['created', 'byCreated'],
        ['reward', 'byReward'],
        ['reused', 'byReused'],
      ] as const) {
        const order = decoded.cache[section]!;
        const kept = Array.from({ length: order.length }, (_, i) => (ArrayBuffer.isView(order) ? order[i]! : order.get(i)));
        const value = (s: number) => decoded[key].get(s);
        if (key !== 'created' || decoded.cache.createdOrdered !== true)
          expect(kept, `${round} ${key}`).toEqual(slots.toSorted((x, y) => value(x) - value(y) || x - y));
      }
      expect(new Set(slots.map((s) => decoded.reused.get(s))).size).toBeGreaterThan(3);
      bank = bankOf(
        Array.from({ length: 60 }, (_, i) => mixed(i + 7)).filter((e) => e !== undefined),
        decoded,
      );
    }
  });

  it('gives up on a cursor that is not its own', () => {
    const bank = decodedWith(50, mixed, 10);
    expect(stepBank(bank, { section: 99 }, 1024)).toBeUndefined();
    expect(stepBank(bank, { section: 3, pos: 0, sub: 0, at: 0, off: 0, start: 0, counts: [1], lengths: undefined }, 1024)).toBeUndefined();
  });
});
