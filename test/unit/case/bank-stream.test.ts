// The bank's streamed build (journal/derived/bank/stream.ts): the body it writes is exactly encodeBank's of the bank a replay of the
// records taken folds — cases replaced, deleted, re-counted (past 2^32 too), unfoldable, with ids and words outside
// ASCII, ids that share their hash, batches of rows and ranges of postings smaller than the data, and records kept
// but never taken (a torn tail). Scratch space here is memory: the domain never touches the file system.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idHash32 } from '../../../src/journal/derived/bank/bank';
import { CASE_BANK_RULES } from '../../../src/domain/case/bank';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { streamBank } from '../../../src/journal/derived/bank/stream';
import { CASE_VOCABULARY } from '../../../src/domain/case/events';
import type { Scratch, ScratchFile, ScratchSort } from '../../../src/journal/codec/store-spec';
import { bankOf, body, recordsOf, recorded, type Given } from './fixtures';
import { propertyRuns, stressIt } from '../../helpers/cli';

class MemoryFile implements ScratchFile {
  private buf = Buffer.alloc(1024);
  size = 0;

  append(bytes: Uint8Array): void {
    if (this.size + bytes.length > this.buf.length) {
      const grown = Buffer.alloc(Math.max(2 * this.buf.length, this.size + bytes.length));
      this.buf.copy(grown, 0, 0, this.size);
      this.buf = grown;
    }
    this.buf.set(bytes, this.size);
    this.size += bytes.length;
  }

  read(into: Uint8Array, position: number): number {
    const n = Math.max(0, Math.min(into.length, this.size - position));
    into.set(this.buf.subarray(position, position + n));
    return n;
  }
}

/**
 * As SpillSort does it: runs of RUN entries, each sorted stably by the first `words` words, then merged comparing
 * four words (the earlier run first among equals) — so an order that holds only by the order pushed, across runs,
 * comes out wrong here too.
 */
class MemorySort implements ScratchSort {
  private readonly entries: number[][] = [];

  constructor(private readonly words: number) {}

  push(...w: number[]): void {
    this.entries.push([...w, 0, 0].slice(0, 8).map((v) => v >>> 0));
  }

  merged() {
    const RUN = 3;
    const by = (n: number) => (a: number[], b: number[]) => {
      for (let k = 0; k < n; k++) if (a[k] !== b[k]) return a[k]! - b[k]!;
      return 0;
    };
    const runs: number[][][] = [];
    for (let i = 0; i < this.entries.length; i += RUN) runs.push(this.entries.slice(i, i + RUN).sort(by(this.words)));
    const at = runs.map(() => 0);
    const sorted: number[][] = [];
    for (;;) {
      let best = -1;
      for (let r = 0; r < runs.length; r++) {
        if (at[r]! >= runs[r]!.length) continue;
        if (best < 0 || by(4)(runs[r]![at[r]!]!, runs[best]![at[best]!]!) < 0) best = r;
      }
      if (best < 0) break;
      sorted.push(runs[best]![at[best]!++]!);
    }
    const words = Uint32Array.from(sorted.flat());
    return {
      words,
      index: 0,
      get done() {
        return this.index >= sorted.length;
      },
      next() {
        this.index += 1;
      },
    };
  }
}

const scratchOf = (keyHash: (text: string) => [number, number]): Scratch => ({
  file: () => new MemoryFile(),
  sort: (words) => new MemorySort(words),
  keyHash,
});

const REAL = (text: string): [number, number] => [idHash32(`x${text}`) >>> 8, idHash32(text)];
/** Every id the same hash: each group's ids are told apart by their bytes alone. */
const ONE = (): [number, number] => [0, 7];

/** The streamed body of `events`, the last `torn` of them kept but never taken. */
function streamed(events: readonly Given[], keyHash = REAL, torn = 0, sizes: { rows?: number; postings?: number } = {}): Buffer {
  const build = streamBank(CASE_BANK_RULES, scratchOf(keyHash), sizes);
  recordsOf(events).forEach(({ record, at }, i) => {
    // As the verifying scan does: a record whose payload the vocabulary refuses is never kept.
    if (CASE_VOCABULARY.payloadProblem?.(record) !== undefined) return;
    const kept = build.keep(record, at);
    if (i < events.length - torn) build.take(kept);
  });
  const { length, write } = build.finish();
  const out = Buffer.alloc(length);
  const seen = new Uint8Array(length);
  write((bytes, at) => {
    for (let i = 0; i < bytes.length; i++) {
      if (seen[at + i]) throw new Error(`byte ${at + i} written twice`);
      seen[at + i] = 1;
    }
    out.set(bytes, at);
  });
  return out;
}

const expected = (events: readonly Given[]) => encodeBank(bankOf(events));

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa', '東京', 'zeta', 'ÉCOLE', 'naïve'];
const task = (i: number) => `${WORDS[i % 10]} ${WORDS[(i * 7) % 10]} w${i % 37} the`;

describe('the streamed bank build', () => {
  it('writes encodeBank’s bytes for cases recorded, replaced, deleted and re-counted', () => {
    const events: Given[] = [];
    for (let i = 0; i < 300; i++)
      events.push(recorded({ id: `c_${i}`, task: task(i), reward: (i % 10) / 10, success: i % 3 !== 0, tags: i % 4 ? [] : ['Tag-A'] }));
    for (let i = 0; i < 300; i += 7) events.push(recorded({ id: `c_${i}`, task: `replaced ${task(i + 3)}`, reused: 4 }));
    for (let i = 0; i < 300; i += 5) events.push({ ev: 'case.reused', data: { case_id: `c_${i}`, times_reused: i + 1 } });
    for (let i = 0; i < 300; i += 11) events.push({ ev: 'case.deleted', data: { case_id: `c_${i}` } });
    events.push({ ev: 'case.reused', data: { case_id: 'c_1', times_reused: 2 ** 40 + 3 } });
    events.push({ ev: 'case.reused', data: { case_id: 'never', times_reused: 5 } });
    events.push({ ev: 'case.deleted', data: { case_id: 'never' } });
    for (const sizes of [{}, { rows: 7, postings: 5 }, { rows: 1, postings: 1 }]) {
      expect(streamed(events, REAL, 0, sizes).equals(expected(events))).toBe(true);
      expect(streamed(events, ONE, 0, sizes).equals(expected(events))).toBe(true);
    }
  });

  it('writes encodeBank’s bytes for an empty bank, a bank of deletions only, and unfoldable puts', () => {
    expect(streamed([]).equals(expected([]))).toBe(true);
    const gone: Given[] = [recorded({ id: 'a', task: 'one two' }), { ev: 'case.deleted', data: { case_id: 'a' } }];
    expect(streamed(gone).equals(expected(gone))).toBe(true);
    const bad: Given[] = [
      { ev: 'case.recorded', data: { ...body({ id: 'b', task: 'unfoldable words' }), reward: 7 } },
      recorded({ id: 'b', task: 'kept words' }),
      { ev: 'case.recorded', data: { ...body({ id: 'b', task: 'again unfoldable' }), created_at: 'soon' } },
    ];
    expect(streamed(bad).equals(expected(bad))).toBe(true);
  });

  it('leaves out what was kept but never taken: its cases, its events and the words only it brought', () => {
    const events: Given[] = [
      recorded({ id: 'a', task: 'first words' }),
      recorded({ id: 'b', task: 'second words' }),
      { ev: 'case.reused', data: { case_id: 'a', times_reused: 3 } },
      recorded({ id: 'c', task: 'torn brandnew' }),
      { ev: 'case.deleted', data: { case_id: 'b' } },
      recorded({ id: 'a', task: 'torn replacement' }),
    ];
    for (let torn = 0; torn <= events.length; torn++) {
      expect(streamed(events, REAL, torn).equals(expected(events.slice(0, events.length - torn)))).toBe(true);
      expect(streamed(events, ONE, torn, { rows: 1, postings: 1 }).equals(expected(events.slice(0, events.length - torn)))).toBe(true);
    }
  });

  // At the real batch sizes (the test's merge is quadratic: minutes on a busy machine), in npm run test:stress; the
  // property below crosses batches of one to three rows in every run.
  stressIt('crosses its batches of rows with more cases than one holds', () => {
    const events: Given[] = Array.from({ length: 40_000 }, (_, i) => recorded({ id: `c_${i % 30_000}`, task: task(i), reward: (i % 7) / 7 }));
    expect(streamed(events).equals(expected(events))).toBe(true);
  });

  it('agrees with the replay over any sequence of events (ids and words outside ASCII, shared hashes)', () => {
    const id = fc.constantFrom('a', 'b', 'é', '東', 'c_1', 'ab');
    const words = fc.array(fc.constantFrom('alpha', 'Beta', 'γάμμα', '東京', 'x', 'the', 'a1', '42'), { maxLength: 6 });
    const event: fc.Arbitrary<Given> = fc.oneof(
      fc
        .record({ id, words, tags: fc.array(fc.constantFrom('Tag', 'ü-tag', ''), { maxLength: 2 }), reward: fc.constantFrom(0, 0.5, 1, 3), reused: fc.nat(9) })
        .map((c) => recorded({ id: c.id, task: c.words.join(' '), tags: c.tags, reward: c.reward, reused: c.reused })),
      fc.record({ id, n: fc.oneof(fc.nat(20), fc.constant(2 ** 33 + 1)) }).map((r) => ({ ev: 'case.reused', data: { case_id: r.id, times_reused: r.n } })),
      id.map((c) => ({ ev: 'case.deleted', data: { case_id: c } })),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.nat(3), fc.boolean(), (events, torn, collide) => {
        const cut = Math.min(torn, events.length);
        const want = expected(events.slice(0, events.length - cut));
        expect(streamed(events, collide ? ONE : REAL, cut, { rows: 3, postings: 2 }).equals(want)).toBe(true);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
