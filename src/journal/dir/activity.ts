// The activity tally of a data directory's journal (derived/activity-tally.ts): how the ui's activity chart reaches
// the derived layer, which only dir/ may.
export { activityCounts, type ActivityRule } from '../derived/index';
