import { describe, expect, it } from 'vitest';
import { thresholdsOf } from '../../../src/cli/thresholds';
import { DEFAULT_THRESHOLDS } from '../../../src/domain/session/freshness';
import { refusalOf } from '../../helpers/refusal';

describe('freshness thresholds (session list and doctor)', () => {
  it('defaults without flags or environment', () => {
    expect(thresholdsOf({})).toEqual(DEFAULT_THRESHOLDS);
  });

  it('takes the environment, and flags over the environment', () => {
    const env = { CRUX_FRESH_FOR: '5m', CRUX_STALE_AFTER: '2h', CRUX_CLOCK_SKEW: '30s' };
    expect(thresholdsOf(env)).toEqual({ freshMs: 300_000, staleMs: 7_200_000, skewMs: 30_000 });
    expect(thresholdsOf(env, { freshFor: '1m', staleAfter: '1h' })).toEqual({ freshMs: 60_000, staleMs: 3_600_000, skewMs: 30_000 });
  });

  it('refuses a bad duration or a fresh threshold beyond the stale one (exit 5), naming the source', () => {
    const refusal = refusalOf;
    expect(refusal(() => thresholdsOf({ CRUX_STALE_AFTER: 'soon' }))).toMatch(/^5 .*CRUX_STALE_AFTER/);
    expect(refusal(() => thresholdsOf({}, { freshFor: 'x' }))).toMatch(/^5 .*--fresh-for/);
    expect(refusal(() => thresholdsOf({}, { freshFor: '2d', staleAfter: '1d' }))).toMatch(/^5 the fresh threshold/);
  });
});
