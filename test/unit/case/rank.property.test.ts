// The optimized ranking (columns, term ids, bounded top-k) against a naive reading of SPEC §5.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rankCases } from '../../../src/domain/case/rank';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { decodeCaseBank } from '../../../src/domain/case/bank';
import { CASE_TERMS } from '../../../src/domain/case/bank-terms';
import { tokenize } from '../../../src/domain/case/tokenize';
import type { CaseBank } from '../../../src/domain/case/bank';
import { bankOf, bodyOf, recorded, type CaseSpec, type Given } from './fixtures';
import { propertyRuns } from '../../helpers/cli';

// Deliberately written differently from src: char by char, code points via Array.from, Rust's
// char::is_alphanumeric spelled as its two halves (is_alphabetic: Alphabetic; is_numeric: Nd, Nl, No).
const isAlphanumeric = (ch: string) => /^\p{Alphabetic}$/u.test(ch) || /^[\p{Nd}\p{Nl}\p{No}]$/u.test(ch);
function naiveTokens(text: string): Set<string> {
  const out = new Set<string>();
  let run: string[] = [];
  const flush = () => {
    if (run.length >= 2) out.add(run.join(''));
    run = [];
  };
  for (const ch of Array.from(text.toLowerCase())) {
    if (isAlphanumeric(ch)) run.push(ch);
    else flush();
  }
  flush();
  return out;
}

function naiveRank(cases: Map<string, CaseSpec>, q: string, topK: number, onlySuccess: boolean, min: number) {
  const qt = naiveTokens(q);
  const scored = [];
  for (const c of cases.values()) {
    if (onlySuccess && c.success === false) continue;
    const terms = naiveTokens(c.task);
    for (const tag of c.tags ?? []) for (const t of naiveTokens(tag)) terms.add(t);
    const inter = [...qt].filter((t) => terms.has(t)).length;
    if (inter === 0) continue;
    const sim = inter / new Set([...qt, ...terms]).size;
    if (sim < min) continue;
    scored.push({ id: c.id, sim, reward: c.reward ?? 1, created: Date.parse(c.created!) });
  }
  const cp = (s: string) => Array.from(s).map((ch) => ch.codePointAt(0)!);
  const byCodePoints = (a: string, b: string) => {
    const x = cp(a),
      y = cp(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  };
  scored.sort((a, b) => b.sim - a.sim || b.reward - a.reward || b.created - a.created || byCodePoints(a.id, b.id));
  return scored.slice(0, topK).map((s) => [s.id, s.sim]);
}

const WORDS = [
  'longaa',
  'deploy',
  'Deploy',
  'db',
  'x',
  '9',
  '42',
  'café',
  'cafe\u0301',
  'İstanbul',
  '東京',
  '日',
  '𐐀𐐀',
  '𐐀',
  'ΟΔΟΣ',
  'snake_case',
  'a-b',
  'ok!',
  '🚀go',
  'किताब',
  'हिन्दी',
  'कि',
  'தமிழ்',
  'ক্ষ',
];
const text = fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((w) => w.join(' '));
// Past 127 distinct terms a posting's meta saturates and ranking reads the term count from its column.
const LONG = Array.from({ length: 130 }, (_, i) => `long${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(' ');
const task = fc.oneof({ weight: 9, arbitrary: text }, { weight: 1, arbitrary: text.map((t) => `${t} ${LONG}`) });
const caseSpec = fc.record({
  id: fc.constantFrom('c_a', 'c_b', 'c_c', 'c_d', 'c_e', 'c_\uFF21', 'c_\u{1F600}', 'c_B'),
  task,
  tags: fc.array(text, { maxLength: 2 }),
  // Rewards that share a quantum of the posting meta (floor(r × 255)) but differ, and ones either side of a step.
  reward: fc.constantFrom(0, 0.5, 0.5 + 1e-9, 0.501, 1 / 255, 2 / 255 - 1e-12, 0.999, 1),
  success: fc.boolean(),
  created: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'),
});
const op = fc.oneof(
  caseSpec.map((c) => ({ kind: 'put' as const, c })),
  fc.constantFrom('c_a', 'c_b', 'c_\uFF21').map((id) => ({ kind: 'delete' as const, id })),
);

// Cases no query word reaches, recorded first: with them the query's postings are a small share of the bank,
// and ranking counts shared terms from a sorted list of postings instead of arrays the size of the bank.
const FILLER: Given[] = Array.from({ length: 600 }, (_, i) =>
  recorded({ id: `c_fill${i}`, task: `filler${i} padding`, tags: [], reward: 1, success: true, created: '2026-01-01T00:00:00.000Z' }),
);

/** What a database's term rows give a query (StoreSpec.terms): a bank of only the cases holding one of its terms. */
function viaTermRows(bank: CaseBank, q: string): CaseBank {
  const terms = [...tokenize(q)];
  const hits = [...CASE_TERMS.entries(bank)].flatMap((e) => {
    const has = terms.flatMap((t, i) => (e.terms.includes(t) ? [i] : []));
    return has.length === 0 ? [] : [{ key: e.key, has, facts: e.facts }];
  });
  return CASE_TERMS.fromHits(terms, hits);
}

describe('rankCases against a naive reference', () => {
  it('returns the same ids and similarities, in the same order', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(op, { maxLength: 25 }),
        text,
        fc.integer({ min: 0, max: 8 }),
        fc.boolean(),
        fc.constantFrom(0, 0.2, 0.5),
        (filled, ops, q, topK, onlySuccess, min) => {
          const model = new Map<string, CaseSpec>();
          const events: Given[] = filled ? [...FILLER] : [];
          for (const o of ops) {
            if (o.kind === 'put') {
              model.delete(o.c.id);
              model.set(o.c.id, o.c);
              events.push(recorded(o.c));
            } else {
              model.delete(o.id);
              events.push({ ev: 'case.deleted', data: { case_id: o.id } });
            }
          }
          const bank = bankOf(events);
          // The same bank through the cache codec, cut at some point and continued by replay.
          const cut = Math.floor(events.length / 2);
          const resumed = bankOf(events.slice(cut), decodeCaseBank(bodyOf(encodeBank(bankOf(events.slice(0, cut)))))!);
          const viaCache = rankCases(resumed, { text: q, topK, onlySuccess, minSimilarity: min }).map((h) => [resumed.idOf(h.slot), h.similarity]);
          const got = rankCases(bank, { text: q, topK, onlySuccess, minSimilarity: min }).map((h) => [bank.idOf(h.slot), h.similarity]);
          expect(got).toEqual(naiveRank(model, q, topK, onlySuccess, min));
          expect(viaCache).toEqual(got);
          expect(resumed.liveCount).toBe(model.size + (filled ? FILLER.length : 0));
          // Through term rows as PostgreSQL keeps them, from a replayed bank and from one decoded from a snapshot.
          for (const from of [bank, resumed]) {
            const rows = viaTermRows(from, q);
            expect(rankCases(rows, { text: q, topK, onlySuccess, minSimilarity: min }).map((h) => [rows.idOf(h.slot), h.similarity])).toEqual(got);
          }
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });
});
