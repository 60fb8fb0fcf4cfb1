import { describe, expect, it } from 'vitest';
import type { LazyColumns } from '../../../src/journal/derived/bank/layout';
import { encodeBank } from '../../../src/journal/derived/bank/steps';
import { CaseBank, decodeCaseBank } from '../../../src/domain/case/bank';

import { rankCases } from '../../../src/domain/case/rank';
import { bankOf, bodyOf, recorded } from './fixtures';

const q = (text: string) => ({ text, topK: 10, onlySuccess: false, minSimilarity: 0 });

describe('bank codec', () => {
  const bank = bankOf([
    recorded({ id: 'c_1', task: 'restart nginx', reward: 0.5, created: '2026-01-02T00:00:00.000Z' }),
    recorded({ id: 'c_2', task: 'compile 東京 kernel', tags: ['build'], success: false }),
    recorded({ id: 'c_3', task: 'gone soon' }),
    { ev: 'case.deleted', data: { case_id: 'c_3' } },
    { ev: 'case.reused', data: { case_id: 'c_1', times_reused: 4 } },
  ]);

  it('round-trips live cases, positions, reuse counts and the index, dropping dead slots', () => {
    const decoded = decodeCaseBank(bodyOf(encodeBank(bank)))!;
    expect(decoded.slots).toBe(2);
    expect(decoded.liveCount).toBe(2);
    expect(decoded.liveRecordBytes).toBe(bank.liveRecordBytes);
    expect([decoded.idOf(0), decoded.idOf(1)]).toEqual(['c_1', 'c_2']);
    expect(decoded.position(1)).toEqual(bank.position(1));
    expect(decoded.reused.get(0)).toBe(4);
    expect(decoded.success.get(1)).toBe(0);
    expect(decoded.slotOf('c_2')).toBe(1);
    expect(decoded.slotOf('c_3')).toBeUndefined();
    expect(rankCases(decoded, q('東京 build')).map((h) => [decoded.idOf(h.slot), h.similarity])).toEqual([['c_2', 2 / 4]]);
    expect(decoded.bodies.size).toBe(0);
  });

  it('keeps folding after a decode', () => {
    const decoded = bankOf(
      [recorded({ id: 'c_4', task: 'restart apache' }), recorded({ id: 'c_1', task: 'restart nothing' }), { ev: 'case.deleted', data: { case_id: 'c_2' } }],
      decodeCaseBank(bodyOf(encodeBank(bank)))!,
    );
    // Both 1/2, same reward and time: the lower id first.
    expect(rankCases(decoded, q('restart')).map((h) => decoded.idOf(h.slot))).toEqual(['c_1', 'c_4']);
    expect(decoded.liveCount).toBe(2);
    const again = decodeCaseBank(bodyOf(encodeBank(decoded)))!;
    expect(again.liveSlots().map((s) => again.idOf(s))).toEqual(['c_4', 'c_1']);
  });

  it('round-trips an empty bank', () => {
    const empty = decodeCaseBank(bodyOf(encodeBank(new CaseBank())))!;
    expect(empty.slots).toBe(0);
    expect(rankCases(empty, q('anything'))).toEqual([]);
  });

  it('answers undefined for bytes it did not write, truncated or inconsistent ones', () => {
    const bytes = encodeBank(bank);
    expect(decodeCaseBank(bodyOf(Buffer.from('not a bank\n')))).toBeUndefined();
    expect(decodeCaseBank(bodyOf(Buffer.alloc(0)))).toBeUndefined();
    expect(decodeCaseBank(bodyOf(bytes.subarray(0, bytes.length - 16)))).toBeUndefined();
    const header = JSON.parse(bytes.toString('utf8', 0, bytes.indexOf(10)));
    const withHeader = (h: object) => {
      const text = JSON.stringify(h);
      const copy = Buffer.from(bytes);
      copy.write(text.padEnd(bytes.indexOf(10), ' '), 0);
      return copy;
    };
    expect(decodeCaseBank(bodyOf(withHeader({ ...header, v: 99 })))).toBeUndefined();
    // v1 banks hold \p{L}-run terms (before SPEC §5 read Alphabetic): their vocabulary is stale, never trusted;
    // v2 banks have no id hashes, v3 no posting metas, v4 no tag marks (a tag counted from them would be missing),
    // v5 no created order, v6 no reward nor reused order (their sections would be read as others).
    expect(header.v).toBe(7);
    for (const v of [1, 2, 3, 4, 5, 6]) expect(decodeCaseBank(bodyOf(withHeader({ ...header, v })))).toBeUndefined();
    // Shapes that disagree are refused.
    const columns = decodeCaseBank(bodyOf(bytes))!.cache;
    const withColumn = (patch: object) => new CaseBank({ ...columns, ...patch } as LazyColumns);
    expect(() => withColumn({ reward: new Float64Array(1) })).toThrow(RangeError);
    expect(() => withColumn({ postStart: new Uint32Array(1) })).toThrow(RangeError);
    expect(() => withColumn({ idHash: new Uint32Array(2) })).toThrow(RangeError);
    for (const order of ['byCreated', 'byReward', 'byReused']) expect(() => withColumn({ [order]: new Uint32Array(1) })).toThrow(RangeError);
    expect(() => withColumn({ postMeta: new Uint16Array(columns.postMeta.length + 1) })).toThrow(RangeError);
    // A posting pointing past the last slot is skipped by ranking, not read out of bounds.
    const damaged = withColumn({ postSlots: new Uint32Array(columns.postSlots.length).fill(1000) });
    expect(rankCases(damaged, q('restart nginx 東京 build'))).toEqual([]);
    // Decoding a pooled, unaligned copy works as well.
    const unaligned = Buffer.concat([Buffer.alloc(3), bytes]).subarray(3);
    expect(decodeCaseBank(bodyOf(unaligned))?.slots).toBe(2);
  });
});
