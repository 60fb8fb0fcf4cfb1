import { describe, expect, it } from 'vitest';
import { collectWorkIds, selectFacts, type BundlableFact } from '../../../src/domain/handoff/bundle';

const fact = (fact_id: string, over: Partial<BundlableFact> = {}): BundlableFact => ({
  fact_id,
  raw: JSON.stringify({ fact_id }),
  entity: null,
  private: false,
  deleted: false,
  stored_at: '2026-01-01T00:00:00Z',
  ...over,
});

describe('selectFacts', () => {
  const state = { notes: ['see f_ref', 'f_ref'], nested: { deep: [{ id: 'f_deep' }] }, f_key: 'not a reference' };

  it('bundles referenced, about-the-session and decision facts; never private or deleted ones', () => {
    const visible = [
      fact('f_ref'),
      fact('f_deep'),
      fact('f_key'), // only named by an object key: not a reference
      fact('f_about', { entity: 's1' }),
      fact('f_decision', { entity: '__decisions__::s1' }),
      fact('f_decision_sub', { entity: '__decisions__::s1::db' }),
      fact('f_other_decision', { entity: '__decisions__::s10' }),
      fact('f_private', { entity: 's1', private: true }),
      fact('f_deleted', { entity: 's1', deleted: true }),
      fact('f_unrelated', { entity: 'other' }),
    ];
    expect(
      selectFacts(state, 's1', visible)
        .map((f) => f.fact_id)
        .sort(),
    ).toEqual(['f_about', 'f_decision', 'f_decision_sub', 'f_deep', 'f_ref'].sort());
  });

  it('"see f_ref" is not a reference: only strings that start with f_', () => {
    expect(selectFacts({ a: 'see f_x' }, 's', [fact('f_x')])).toEqual([]);
  });

  it('sorts by stored_at (to the nanosecond, any offset), then fact_id', () => {
    const visible = [
      fact('f_b', { entity: 's', stored_at: '2026-01-01T00:00:00.000000002Z' }),
      fact('f_a', { entity: 's', stored_at: '2026-01-01T00:00:00.000000002Z' }),
      fact('f_c', { entity: 's', stored_at: '2026-01-01T00:00:00.000000001Z' }),
      fact('f_d', { entity: 's', stored_at: '2026-01-01T01:00:00+02:00' }), // 2025-12-31T23:00Z: first
    ];
    expect(selectFacts({}, 's', visible).map((f) => f.fact_id)).toEqual(['f_d', 'f_c', 'f_a', 'f_b']);
  });
});

describe('collectWorkIds', () => {
  it('w_ and execplan: strings plus the tail of bundled __work__:: facts, a set in byte order', () => {
    const state = { a: 'w_2', b: ['execplan:x', 'w_2', 'w_10', 'xw_1'], c: { w_key: 'é', d: 'w_é' } };
    const bundled = [fact('f_1', { entity: '__work__::team::w_9' }), fact('f_2', { entity: '__work__::' }), fact('f_3', { entity: 'w_not' })];
    expect(collectWorkIds(state, bundled)).toEqual(['execplan:x', 'w_10', 'w_2', 'w_9', 'w_é']);
  });

  it('sorts by UTF-8 bytes like Rust, not by UTF-16 code units', () => {
    // U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80) in UTF-8; JavaScript's default sort says otherwise.
    expect(collectWorkIds(['w_😀', 'w_～'], [])).toEqual(['w_～', 'w_😀']);
    expect(['w_😀', 'w_～'].sort()).toEqual(['w_😀', 'w_～']);
  });
});
