// The ordered value of `status_updated` (fold.ts), and the range of one status in it: what a status-filtered list
// and the overview's counts by status and freshness read from the index.
import { tryParseTime } from '../../shared/time';
import { SESSION_STATES, type SessionStatus } from './machine';

/** The close outcomes that are failures (the overview's recent failures, the activity chart's failed series). */
export const FAILED_OUTCOMES = ['failed', 'abandoned'] as const;

/**
 * The session store's secondary names kept here (fold.ts lists them last): every session by status and last write,
 * the unscoped ones and the scoped ones apart; and the sessions closed as failed or abandoned by when they closed
 * (the overview's recent failures).
 */
export const STATUS_INDEXES = ['status_updated', 'unscoped_status_updated', 'scoped_status_updated', 'failed_closed'] as const;

/** A session's values of STATUS_INDEXES (`updated`: its last write's time, parsed). */
export function statusValues(
  r: { readonly status: SessionStatus; readonly outcome: string | null; readonly closed_at: string | null },
  unscoped: boolean,
  updated: number | undefined,
): (number | undefined)[] {
  const status = statusValue(r.status, updated);
  const failed = r.status === 'closed' && (FAILED_OUTCOMES as readonly (string | null)[]).includes(r.outcome) ? tryParseTime(r.closed_at) : undefined;
  return [status, unscoped ? status : undefined, unscoped ? undefined : status, failed];
}

/**
 * `status_updated`: a session's status and the time of its last write as one ordered value, a range per status
 * (its rank times STATUS_STRIDE, plus the time moved past zero by TIME_SHIFT: an RFC 3339 time, years 0000–9999 with
 * any offset, lies within ±2^46 ms of 1970 and under 2^48 with the shift). A status-filtered list reads its status's
 * range newest first, and counts it, as a plain list reads its own.
 */
export const STATUS_STRIDE = 2 ** 49;
export const TIME_SHIFT = 2 ** 46;
/** A session without a time of its last write lists after every other of its status (byRecency): its range's least value. */
const statusValue = (status: SessionStatus, updated: number | undefined): number =>
  SESSION_STATES.indexOf(status) * STATUS_STRIDE + (updated === undefined ? 0 : Math.max(0, Math.min(STATUS_STRIDE - 1, updated + TIME_SHIFT)));

/** The least time of the range (a session without a time of its last write: `unknown` freshness). */
export const NO_TIME = -TIME_SHIFT;

/** The range of `status_updated` (and its scoped kin) that holds the sessions of `status` last written from `from` to `to` (ms, inclusive). */
export function statusRange(status: SessionStatus, from = -TIME_SHIFT, to = STATUS_STRIDE - TIME_SHIFT - 1): { atLeast: number; atMost: number } {
  return { atLeast: statusValue(status, from), atMost: statusValue(status, to) };
}
