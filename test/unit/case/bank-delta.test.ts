// The case bank's delta: a bank decoded from its snapshot and continued by its delta is the bank that folded
// the records after the snapshot; a delta that does not fit the bank is refused and leaves it untouched.
import { describe, expect, it } from 'vitest';
import type { CaseBank } from '../../../src/domain/case/bank';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { decodeCaseBank } from '../../../src/domain/case/bank';
import { applyBankDelta, encodeBankDelta } from '../../../src/journal/derived/bank/delta';
import { rankCases } from '../../../src/domain/case/rank';
import { bankOf, bodyOf, recorded, type Given } from './fixtures';

const base: Given[] = Array.from({ length: 12 }, (_, i) => recorded({ id: `c_${i}`, task: `deploy ${i % 2 ? 'nginx' : 'redis'} step${i}`, reward: i / 12 }));
const later: Given[] = [
  recorded({ id: 'c_new', task: 'deploy nginx again brandnew', tags: ['ops'] }),
  recorded({ id: 'c_3', task: 'replaced redis task', reward: 0.2 }),
  { ev: 'case.deleted', data: { case_id: 'c_5' } },
  { ev: 'case.reused', data: { case_id: 'c_7', times_reused: 4 } },
  recorded({ id: 'c_new', task: 'deploy nginx twice brandnew' }),
  { ev: 'case.reused', data: { case_id: 'c_new', times_reused: 2 } },
];

const decoded = () => decodeCaseBank(bodyOf(encodeBank(bankOf(base))))!;
const view = (bank: CaseBank) => ({
  ranked: ['deploy nginx', 'brandnew', 'redis ops', 'replaced'].map((text) =>
    rankCases(bank, { text, topK: 20, onlySuccess: false, minSimilarity: 0 }).map((h) => [bank.idOf(h.slot), h.similarity, bank.reused.get(h.slot)]),
  ),
  live: bank.liveSlots().map((s) => bank.idOf(s)),
  held: ['c_5', 'c_new', 'c_none'].map((id) => bank.hasHeld(id)),
  liveCount: bank.liveCount,
  liveRecordBytes: bank.liveRecordBytes,
});

describe('the case bank delta', () => {
  it('a decoded bank continued by its delta answers as the bank that folded the records', () => {
    const folded = bankOf(later, decoded());
    const bytes = encodeBankDelta(folded)!;
    const continued = decoded();
    expect(applyBankDelta(continued, bytes)).toBe(true);
    expect(view(continued)).toEqual(view(folded));
    expect(view(continued)).toEqual(view(bankOf([...base, ...later])));
    // It folds further records as the other does.
    const more = [recorded({ id: 'c_more', task: 'brandnew redis' }), { ev: 'case.deleted', data: { case_id: 'c_new' } }];
    expect(view(bankOf(more, continued))).toEqual(view(bankOf(more, folded)));
  });

  it('refuses a delta that does not fit, leaving the bank untouched', () => {
    const doc = JSON.parse(Buffer.from(encodeBankDelta(bankOf(later, decoded()))!).toString());
    const bad = [
      'not json',
      JSON.stringify({ ...doc, v: 2 }),
      JSON.stringify({ ...doc, cachedSlots: 11 }),
      JSON.stringify({ ...doc, cachedTerms: doc.cachedTerms + 1 }),
      JSON.stringify({ ...doc, killed: [12] }),
      JSON.stringify({ ...doc, reusedCached: [[99, 1]] }),
      JSON.stringify({ ...doc, postings: [[0, [3]]] }),
      JSON.stringify({ ...doc, postings: [[9999, [12]]] }),
      JSON.stringify({ ...doc, postings: [...doc.postings, doc.postings[0]] }),
      JSON.stringify({ ...doc, alive: [...doc.alive, 1] }),
      JSON.stringify({ ...doc, success: doc.success.map(() => 2) }),
      JSON.stringify({ ...doc, reward: doc.reward.map(() => null) }),
      JSON.stringify({ ...doc, recOffset: doc.recOffset.map(() => -1) }),
      JSON.stringify({ ...doc, ids: doc.ids.map(() => 7) }),
    ];
    for (const text of bad) {
      const bank = decoded();
      expect(applyBankDelta(bank, Buffer.from(text)), text.slice(0, 60)).toBe(false);
      expect(view(bank)).toEqual(view(decoded()));
    }
    // A delta is applied to the bank it continues only: one already continued refuses a second.
    const once = decoded();
    expect(applyBankDelta(once, Buffer.from(JSON.stringify(doc)))).toBe(true);
    expect(applyBankDelta(once, Buffer.from(JSON.stringify(doc)))).toBe(false);
  });
});
