// The streamed build's term table (term-table.ts) against caseTerms and a Map of terms in order of first appearance:
// the same terms, in the same order, with the same numbers — over ASCII text (its own loop), text outside ASCII
// (tokenize.ts's path), terms that share a hash in the table, and enough terms to grow and rehash it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TermTable } from '../../../src/journal/derived/bank/term-table';
import { caseTerms, tokenize } from '../../../src/domain/case/tokenize';

/** What the build did before the table: caseTerms, numbered by a Map in order of first appearance. */
class Reference {
  readonly vocab: string[] = [];
  private readonly ids = new Map<string, number>();
  termsOf(task: string, tags: readonly string[]): number[] {
    return [...caseTerms(task, tags)].map((term) => {
      let t = this.ids.get(term);
      if (t === undefined) {
        t = this.vocab.length;
        this.vocab.push(term);
        this.ids.set(term, t);
      }
      return t;
    });
  }
}

function agree(cases: readonly (readonly [string, readonly string[]])[]): void {
  const table = new TermTable(tokenize);
  const reference = new Reference();
  for (const [task, tags] of cases) {
    const want = reference.termsOf(task, tags);
    const n = table.termsOf(task, tags);
    expect(Array.from(table.ids.subarray(0, n))).toEqual(want);
  }
  expect(table.vocab).toEqual(reference.vocab);
}

const unit = fc.constantFrom('a', 'B', 'z', 'Q', '0', '9', ' ', '-', '_', '.', 'é', 'İ', 'ß', 'K', '𝐀', 'क', 'ि', '\u0301', '\n');

describe('the term table of a streamed bank build', () => {
  it('lists caseTerms’s terms in its order, numbered as a Map in order of first appearance (any text)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit, maxLength: 30 }), fc.array(fc.string({ unit, maxLength: 8 }), { maxLength: 3 })), { maxLength: 40 }),
        (cases) => {
          agree(cases);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps apart terms of one length that differ in one unit, over enough terms to grow and rehash the table', () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}`);
    const cases = Array.from({ length: 6_000 }, (_, i) => {
      const task = `The ${words[(i * 7) % words.length]} then ${words[(i * 13) % words.length]!.toUpperCase()} and ${words[i % 50]} ${words[i % 50]}`;
      return [task, i % 3 === 0 ? [words[(i * 31) % words.length]!, 'ÉTÉ'] : []] as const;
    });
    agree(cases);
  });

  it('lists a term once a case, however often the task and tags repeat it', () => {
    const table = new TermTable(tokenize);
    expect(table.termsOf('Go go GO go-go', ['go', 'GO!', 'stop'])).toBe(2);
    expect(table.vocab).toEqual(['go', 'stop']);
    expect(table.termsOf('stop go', [])).toBe(2);
    expect(Array.from(table.ids.subarray(0, 2))).toEqual([1, 0]);
  });
});
