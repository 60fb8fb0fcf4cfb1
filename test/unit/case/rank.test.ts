import { describe, expect, it } from 'vitest';
import { compareCodePoints, parseMinSimilarity, parseTopK, rankCases, type RetrieveQuery } from '../../../src/domain/case/rank';
import type { CaseBank } from '../../../src/domain/case/bank';
import type { CruxError } from '../../../src/shared/errors';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { decodeCaseBank } from '../../../src/domain/case/bank';
import { bankOf, bodyOf, recorded } from './fixtures';

const query = (text: string, more: Partial<RetrieveQuery> = {}): RetrieveQuery => ({ text, topK: 100, onlySuccess: false, minSimilarity: 0, ...more });
const ranked = (bank: CaseBank, q: RetrieveQuery) => rankCases(bank, q).map((h) => [bank.idOf(h.slot), h.similarity]);

describe('rankCases', () => {
  // Query "restart nginx" = {restart, nginx}.
  const bank = bankOf([
    recorded({ id: 'c_long', task: 'restart the nginx server', reward: 1 }), // 2/4 = 0.5
    recorded({ id: 'c_old', task: 'restart nginx', reward: 0.5, created: '2026-01-01T00:00:00.000Z' }), // 1
    recorded({ id: 'c_new', task: 'Nginx: restart!', reward: 0.5, created: '2026-01-02T00:00:00.000Z' }), // 1
    recorded({ id: 'c_b', task: 'restart nginx', reward: 0.5, created: '2026-01-02T00:00:00.000Z' }), // 1, ties c_new
    recorded({ id: 'c_failed', task: 'restart nginx', reward: 1, success: false }), // 1
    recorded({ id: 'c_kernel', task: 'compile the kernel' }), // 0: excluded
    recorded({ id: 'c_tagged', task: 'reload web server config', tags: ['nginx'] }), // 1/6
  ]);

  it('orders by similarity, reward, newest created_at, then case id', () => {
    expect(ranked(bank, query('restart nginx'))).toEqual([
      ['c_failed', 1],
      ['c_b', 1],
      ['c_new', 1],
      ['c_old', 1],
      ['c_long', 0.5],
      ['c_tagged', 1 / 6],
    ]);
  });

  it('matches tags as well as the task, and excludes zero overlap', () => {
    // c_tagged: {reload, web, server, config, nginx} → 2/5; restart+nginx cases → 1/3; c_long → 1/5.
    expect(ranked(bank, query('NGINX config'))).toEqual([
      ['c_tagged', 2 / 5],
      ['c_failed', 1 / 3],
      ['c_b', 1 / 3],
      ['c_new', 1 / 3],
      ['c_old', 1 / 3],
      ['c_long', 1 / 5],
    ]);
    expect(ranked(bank, query('kernel'))).toEqual([['c_kernel', 1 / 3]]);
    expect(ranked(bank, query('nothing shared'))).toEqual([]);
    expect(ranked(bank, query('a ! I'))).toEqual([]);
  });

  it('counts query terms that no case has in the union', () => {
    // {compile, kernel, zzz} vs {compile, the, kernel}: 2 / 4.
    expect(ranked(bank, query('compile kernel zzz'))).toEqual([['c_kernel', 0.5]]);
  });

  it('drops failures with onlySuccess', () => {
    expect(ranked(bank, query('restart nginx', { onlySuccess: true })).map((r) => r[0])).toEqual(['c_b', 'c_new', 'c_old', 'c_long', 'c_tagged']);
  });

  it('keeps the best topK, in order', () => {
    expect(ranked(bank, query('restart nginx', { topK: 2 }))).toEqual([
      ['c_failed', 1],
      ['c_b', 1],
    ]);
    expect(ranked(bank, query('restart nginx', { topK: 0 }))).toEqual([]);
  });

  it('filters the tail with minSimilarity (inclusive)', () => {
    expect(ranked(bank, query('restart nginx', { minSimilarity: 0.5 })).map((r) => r[0])).toEqual(['c_failed', 'c_b', 'c_new', 'c_old', 'c_long']);
    expect(ranked(bank, query('restart nginx', { minSimilarity: 0.51 })).map((r) => r[0])).toEqual(['c_failed', 'c_b', 'c_new', 'c_old']);
  });

  it('forgets deleted cases and ranks a replaced case by its new fields', () => {
    const changed = bankOf([
      recorded({ id: 'c_1', task: 'restart nginx' }),
      recorded({ id: 'c_2', task: 'restart nginx now' }),
      { ev: 'case.deleted', data: { case_id: 'c_1' } },
      { ev: 'case.imported', data: { ...(recorded({ id: 'c_2', task: 'nginx' }).data as object) } },
    ]);
    expect(ranked(changed, query('restart nginx'))).toEqual([['c_2', 0.5]]);
  });

  it('skips malformed payloads instead of failing', () => {
    const odd = bankOf([
      { ev: 'case.recorded', data: { case_id: 'c_x' } },
      { ev: 'case.recorded', data: null },
      { ev: 'case.recorded', data: { ...(recorded({ id: 'c_r', task: 'restart' }).data as object), reward: 'high' } },
      { ev: 'case.reused', data: { case_id: 'c_missing', times_reused: 3 } },
      { ev: 'case.deleted', data: { case_id: 42 } },
      recorded({ id: 'c_ok', task: 'restart' }),
    ]);
    expect(ranked(odd, query('restart'))).toEqual([['c_ok', 1]]);
  });

  it('decides on exact rewards where the postings carry the same quantum of them, cached or folded since', () => {
    // floor(r × 255) is 127 for all three: the quantum cannot order them, the columns must.
    const rewards = [0.5, 0.5 + 1e-9, 0.499];
    const events = rewards.map((reward, i) => recorded({ id: `c${i}`, task: 'rotate the keys', reward }));
    const cached = decodeCaseBank(bodyOf(encodeBank(bankOf(events))))!;
    for (const bank of [bankOf(events), cached, bankOf(events.slice(1), decodeCaseBank(bodyOf(encodeBank(bankOf(events.slice(0, 1)))))!)]) {
      for (const topK of [1, 2, 3]) {
        expect(rankCases(bank, { text: 'rotate keys', topK, onlySuccess: false, minSimilarity: 0 }).map((h) => bank.idOf(h.slot))).toEqual(
          ['c1', 'c0', 'c2'].slice(0, topK),
        );
      }
    }
  });

  it('reads the term count of a case with more terms than a posting meta holds', () => {
    const many = Array.from({ length: 200 }, (_, i) => `t${i}x`).join(' ');
    const events = [recorded({ id: 'long', task: `deploy ${many}` }), recorded({ id: 'short', task: 'deploy now' })];
    const bank = decodeCaseBank(bodyOf(encodeBank(bankOf(events))))!;
    const hits = rankCases(bank, { text: 'deploy', topK: 5, onlySuccess: false, minSimilarity: 0 });
    expect(hits.map((h) => [bank.idOf(h.slot), h.similarity])).toEqual([
      ['short', 1 / 2],
      ['long', 1 / 201],
    ]);
  });

  it('breaks ties on case id by code point, as Rust and Python order strings', () => {
    // U+FF21 (BMP, high) sorts before U+1F600 (astral), though its UTF-16 unit is larger.
    const ids = ['c_\u{1F600}', 'c_\uFF21', 'c_b', 'c_a'];
    const tied = bankOf(ids.map((id) => recorded({ id, task: 'same task' })));
    expect(ranked(tied, query('same')).map((r) => r[0])).toEqual(['c_a', 'c_b', 'c_\uFF21', 'c_\u{1F600}']);
  });
});

describe('compareCodePoints', () => {
  it('orders by code point', () => {
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('\uFFFF', '\u{10000}')).toBeLessThan(0);
    expect(compareCodePoints('\u{10000}', '\uE000')).toBeGreaterThan(0);
    expect(compareCodePoints('x', 'x')).toBe(0);
  });
});

describe('option parsing', () => {
  const code = (f: () => unknown) => {
    try {
      f();
      return 0;
    } catch (error) {
      return (error as CruxError).exitCode;
    }
  };

  it('caps --top-k at 100 and refuses negatives and non-numbers', () => {
    expect(parseTopK('7')).toBe(7);
    expect(parseTopK('0')).toBe(0);
    expect(parseTopK('101')).toBe(100);
    expect(parseTopK('99999999999999999999999')).toBe(100);
    for (const bad of ['-1', 'ten', '2.5', '', '1e3']) expect(code(() => parseTopK(bad))).toBe(5);
  });

  it('accepts --min-similarity from 0 to 1 only', () => {
    expect(parseMinSimilarity('0')).toBe(0);
    expect(parseMinSimilarity('0.25')).toBe(0.25);
    expect(parseMinSimilarity('1')).toBe(1);
    for (const bad of ['-0.1', '1.01', 'half', '', 'NaN', 'Infinity']) expect(code(() => parseMinSimilarity(bad))).toBe(5);
  });
});
