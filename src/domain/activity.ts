// The ui's activity chart (SPEC §12): which records count, in which series. The journal layer keeps the counts per
// hour in each keyed store's index, written by the same appends that write its key lines (StoreSpec.tally; on
// PostgreSQL, rows of the index table written in each write's transaction: pg-tally.ts); a journal without an index
// (handoffs), or whose index is not trusted, is read backwards over the window. Both ask this rule.
import type { JournalRecord } from '../journal/codec/record';
import type { TallyRule } from '../journal/codec/store-spec';
import { FAILED_OUTCOMES } from './session/status-key';

/** The series of the activity chart, in the order the route gives them. */
export const ACTIVITY_SERIES = ['puts', 'closes', 'failed', 'reaps', 'handoffs', 'cases'] as const;
export type ActivitySeries = (typeof ACTIVITY_SERIES)[number];

/** The series a record of event `ev` counts in (a close by its outcome), or undefined. */
export function activitySeries(ev: string, outcome: unknown): ActivitySeries | undefined {
  if (ev === 'session.put') return 'puts';
  if (ev === 'session.closed') {
    if (outcome === 'expired') return 'reaps';
    return (FAILED_OUTCOMES as readonly unknown[]).includes(outcome) ? 'failed' : 'closes';
  }
  if (ev === 'handoff.minted' || ev === 'handoff.accepted') return 'handoffs';
  if (ev === 'case.recorded') return 'cases';
  return undefined;
}

/** The rule a keyed store's index counts by (the session and case stores declare it). */
export const ACTIVITY_TALLY: TallyRule = {
  series: ACTIVITY_SERIES,
  of: (record: JournalRecord) => {
    const series = activitySeries(record.ev, record.data?.outcome);
    return series === undefined ? undefined : ACTIVITY_SERIES.indexOf(series);
  },
};
