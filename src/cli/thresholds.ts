// Freshness thresholds, resolved once for every command that judges freshness (session list, doctor).
import { DEFAULT_THRESHOLDS, type FreshnessThresholds } from '../domain/session/freshness';
import { invalid } from '../shared/errors';
import { parseDuration } from '../shared/time';

export interface ThresholdFlags {
  readonly freshFor?: string | undefined;
  readonly staleAfter?: string | undefined;
}

/** Options (--fresh-for, --stale-after) over CRUX_FRESH_FOR / CRUX_STALE_AFTER / CRUX_CLOCK_SKEW over the defaults. */
export function thresholdsOf(env: NodeJS.ProcessEnv, flags: ThresholdFlags = {}): FreshnessThresholds {
  const pick = (flag: string | undefined, flagName: string, envName: string, fallback: number) =>
    flag !== undefined ? parseDuration(flag, flagName) : env[envName] ? parseDuration(env[envName]!, envName) : fallback;
  const freshMs = pick(flags.freshFor, '--fresh-for', 'CRUX_FRESH_FOR', DEFAULT_THRESHOLDS.freshMs);
  const staleMs = pick(flags.staleAfter, '--stale-after', 'CRUX_STALE_AFTER', DEFAULT_THRESHOLDS.staleMs);
  const skewMs = pick(undefined, '', 'CRUX_CLOCK_SKEW', DEFAULT_THRESHOLDS.skewMs);
  if (freshMs > staleMs)
    throw invalid(`the fresh threshold (${freshMs} ms) is longer than the stale one (${staleMs} ms)`, '--fresh-for must not exceed --stale-after');
  return { freshMs, staleMs, skewMs };
}
