// How recent a session's last write is: fresh | aging | stale | unknown | invalid.
import { tryParseTime, type Instant } from '../../shared/time';

export type Freshness = 'fresh' | 'aging' | 'stale' | 'unknown' | 'invalid';

export interface FreshnessThresholds {
  /** Up to this age a session is fresh. */
  readonly freshMs: number;
  /** Beyond this age a session is stale (between the two: aging). */
  readonly staleMs: number;
  /** A time this far in the future is tolerated as clock skew; beyond it the time is invalid. */
  readonly skewMs: number;
}

export const DEFAULT_THRESHOLDS: FreshnessThresholds = { freshMs: 15 * 60_000, staleMs: 24 * 3_600_000, skewMs: 5 * 60_000 };

export function judgeFreshness(updatedAt: string | null | undefined, now: Instant, t: FreshnessThresholds = DEFAULT_THRESHOLDS): Freshness {
  const at = tryParseTime(updatedAt);
  if (at === undefined) return 'unknown';
  const age = now - at;
  if (age < -t.skewMs) return 'invalid';
  if (age <= t.freshMs) return 'fresh';
  if (age <= t.staleMs) return 'aging';
  return 'stale';
}
