// What an operator must act on among the sessions (the dashboard's first screen, SPEC §12): sessions that ended
// badly of late (failed, abandoned), sessions past their expiry that no reaper closed, sessions about to expire,
// and stranded ones (SPEC §4). Each is a predicate over a session as commands show it, so that a count and the
// list it links to are the same filter; `judgeAttention` counts them all in one pass and keeps a few of each.
import { parseDuration, tryParseTime, type Instant } from '../../shared/time';
import { strandedBy } from './query';
import { FAILED_OUTCOMES } from './status-key';
import type { SessionView } from './view';

/** The close outcomes that are failures (the activity chart and the overview set them apart): status-key.ts's. */
export { FAILED_OUTCOMES };

type View = Pick<SessionView, 'status' | 'freshness' | 'expires_at' | 'closed_at' | 'outcome'>;

const open = (v: View) => v.status !== 'closed';

/** Open, and its expiry has passed: `crux session reap` would close it. */
export const isExpiredUnreaped = (v: View, now: Instant): boolean => {
  const at = tryParseTime(v.expires_at);
  return open(v) && at !== undefined && at <= now;
};

/** Open, and it expires after now but within `withinMs`. */
export const expiresWithin = (v: View, now: Instant, withinMs: number): boolean => {
  const at = tryParseTime(v.expires_at);
  return open(v) && at !== undefined && at > now && at <= now + withinMs;
};

/** Closed with one of `outcomes`, at most `withinMs` ago (any time when undefined). */
export const closedWith = (v: View, outcomes: readonly string[], now: Instant, withinMs?: number): boolean => {
  if (v.status !== 'closed' || v.outcome === null || !outcomes.includes(v.outcome)) return false;
  if (withinMs === undefined) return true;
  const at = tryParseTime(v.closed_at);
  return at !== undefined && now - at <= withinMs;
};

const isStrandedView = (v: View): boolean => strandedBy(v.status, v.freshness);

export interface AttentionWindows {
  /** How far back a failed or abandoned close counts as recent. */
  readonly recentMs: number;
  /** How soon an expiry counts as soon. */
  readonly soonMs: number;
}

/** The default windows as durations are written (the dashboard's links carry them as query parameters). */
export const ATTENTION_WINDOWS = { recent: '7d', soon: '1h' } as const;
export const DEFAULT_ATTENTION: AttentionWindows = { recentMs: parseDuration(ATTENTION_WINDOWS.recent), soonMs: parseDuration(ATTENTION_WINDOWS.soon) };

export interface AttentionItem<S> {
  readonly count: number;
  /** The first few, the most urgent first. */
  readonly sessions: S[];
}

export interface Attention<S> {
  readonly failed_recently: AttentionItem<S>;
  readonly expired_unreaped: AttentionItem<S>;
  readonly expiring_soon: AttentionItem<S>;
  readonly stranded: AttentionItem<S>;
}

const byText =
  (field: 'closed_at' | 'expires_at' | 'updated_at', descending = false) =>
  (a: SessionView, b: SessionView) => {
    const x = a[field] ?? '';
    const y = b[field] ?? '';
    return (x < y ? -1 : x > y ? 1 : 0) * (descending ? -1 : 1);
  };

/**
 * Every session judged once: how many need each kind of attention, and the first `keep` of each — the newest
 * failures, the longest expired, the soonest to expire, the stalest stranded.
 */
export function judgeAttention(sessions: readonly SessionView[], now: Instant, w: AttentionWindows = DEFAULT_ATTENTION, keep = 5): Attention<SessionView> {
  const failed: SessionView[] = [];
  const expired: SessionView[] = [];
  const soon: SessionView[] = [];
  const stranded: SessionView[] = [];
  for (const v of sessions) {
    if (closedWith(v, FAILED_OUTCOMES, now, w.recentMs)) failed.push(v);
    if (isExpiredUnreaped(v, now)) expired.push(v);
    if (expiresWithin(v, now, w.soonMs)) soon.push(v);
    if (isStrandedView(v)) stranded.push(v);
  }
  const item = (list: SessionView[], order: (a: SessionView, b: SessionView) => number) => ({ count: list.length, sessions: list.sort(order).slice(0, keep) });
  return {
    failed_recently: item(failed, byText('closed_at', true)),
    expired_unreaped: item(expired, byText('expires_at')),
    expiring_soon: item(soon, byText('expires_at')),
    stranded: item(stranded, byText('updated_at')),
  };
}
