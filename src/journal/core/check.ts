// `journal check [--repair]` on any kind of store (SPEC §3, §11): every journal verified line by line (format,
// hash, chain, sequence, batches, vocabulary, torn tail), its history too, and, where a store keeps derived rows
// it checks, those against a replay. With --repair, the journal as it was and each removed line go to quarantine
// and the rest is re-chained, damaged history pieces go to quarantine whole, derived rows that disagree are
// rebuilt: a second check is healthy. And what doctor learns of a journal (surveyJournal).
import type { JournalRecord } from '../codec/record';
import { SNAPSHOT_EVENT } from '../codec/verify';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { ProgressSink } from '../codec/reporting';
import type { LinePosition } from '../codec/line';
import { BEFORE_REPAIR, ClockWatch, compactionDue, entityOf, rechain, REMOVED_LINES, removedLineRecord } from './policy';
import { checkHistory } from './history';
import type { LinesScan, LinesSource, LineStore, LockedLines } from './line-store';
import type { JournalFacts, JournalReport } from './store-boundary';
import type { SecretTally } from './secret-survey';

type CheckOpts = { repair: boolean; ts: string; progress?: ProgressSink | undefined; secrets?: SecretTally | undefined };

export async function checkJournals(store: LineStore, specs: readonly StoreSpec<unknown>[], opts: CheckOpts): Promise<JournalReport[]> {
  // Without --repair a check needs only read access: a store whose lock it cannot take for want of write access
  // (a read-only copy) is verified without it (a data directory says so).
  return store.locked(
    async (lines) => {
      const reports: JournalReport[] = [];
      for (const spec of specs) reports.push(await checkJournal(lines, spec, opts));
      return reports;
    },
    { readOnly: !opts.repair },
  );
}

/** What `journal check` (and `crux doctor`) report of one journal's scan. */
function reportOf(file: string, scan: LinesScan, quarantined: number, ms: number): Omit<JournalReport, 'repaired'> {
  return {
    name: journalName(file),
    file,
    exists: scan.exists,
    records: scan.records,
    bytes: scan.bytes,
    problems: scan.problems.map(({ line, reason }) => ({ line, reason })),
    torn_tail: scan.tornTail !== undefined,
    quarantined,
    replay_ms: Math.round(ms * 10) / 10,
  };
}

async function checkJournal<S>(lines: LockedLines, spec: StoreSpec<S>, opts: CheckOpts): Promise<JournalReport> {
  const started = performance.now();
  const kept: JournalRecord[] = [];
  // A store that checks derived rows folds the journal as it verifies. Without --repair it folds each record as
  // it is read, a batch's before it is whole (the replay is compared only when the scan found nothing wrong), so
  // that nothing of a batch is held: a 1M-case import is one batch, and holding it took 770 MiB. A repair keeps
  // the records, to re-chain them, and folds what verified once its batch is whole.
  const derived = lines.checkDerived === undefined ? undefined : { state: spec.initial(), keys: new Set<string>() };
  const replay =
    derived === undefined
      ? undefined
      : (record: JournalRecord, at: LinePosition) => {
          spec.evolve(derived.state, record, at);
          const key = entityOf(spec, record);
          if (key !== undefined) derived.keys.add(key);
        };
  const sink = opts.repair ? (record: JournalRecord, at: LinePosition) => (replay?.(record, at), kept.push(record)) : undefined;
  // The secrets survey sees each record as the scan reads it (secret-survey.ts): no second read.
  const tally = opts.secrets;
  const early = opts.repair ? undefined : replay;
  const see =
    tally === undefined && early === undefined ? undefined : (record: JournalRecord, at: LinePosition) => (tally?.see(spec.file, record), early?.(record, at));
  const survey = tally === undefined ? undefined : (record: JournalRecord) => tally.see(spec.file, record);
  const scan = await lines.journal(spec.file).scan(spec.vocabulary, sink, { progress: opts.progress, see });
  const ms = performance.now() - started;
  const history = await checkHistory(lines, spec.file, spec.vocabulary, { ...opts, see: survey });
  const report = { ...reportOf(spec.file, scan, await lines.quarantined(spec.file), ms), ...(history ? { history } : {}) };
  if (scan.problems.length > 0 && opts.repair) {
    const repaired = await repair(lines, spec, scan, kept, opts.ts);
    // Counted again: what quarantine holds now, the repair's own items with it.
    return { ...report, quarantined: await lines.quarantined(spec.file), repaired };
  }
  if (scan.problems.length > 0) return report;
  // Derived rows, compared with the replay just made (only of a journal that verifies: damage is reported above).
  const disagree = derived === undefined ? undefined : await lines.checkDerived?.(spec, derived, opts.repair);
  return disagree === undefined ? report : { ...report, derived: disagree };
}

/** The journal as it was and each removed line to quarantine, the records that verified re-chained in its place. */
async function repair(
  lines: LockedLines,
  spec: StoreSpec<unknown>,
  scan: LinesScan,
  kept: readonly JournalRecord[],
  ts: string,
): Promise<{ removed: number; quarantine: string[] }> {
  const original = await lines.bytes(spec.file);
  const starts = [0];
  for (let nl = original.indexOf(10); nl !== -1; nl = original.indexOf(10, nl + 1)) starts.push(nl + 1);
  const seen = new Set<number>();
  const skipped = scan.problems.filter((p) => p.skipped && !seen.has(p.line) && seen.add(p.line));
  // Each removed line at its offset in the journal as a file (on PostgreSQL, the offset `journal copy` gives it).
  const removed = skipped.map((p) => {
    const offset = starts[p.line - 1] ?? original.length;
    return removedLineRecord(p.line, offset, p.reason, original.subarray(offset, offset + p.length));
  });
  const quarantine = [await lines.quarantine(spec.file, BEFORE_REPAIR, original, ts)];
  if (removed.length > 0) quarantine.push(await lines.quarantine(spec.file, REMOVED_LINES, `${removed.join('\n')}\n`, ts));
  await lines.replace(spec, rechain(kept, ts), { note: 'repaired' });
  await lines.rewritten(spec);
  return { removed: skipped.length, quarantine };
}

/**
 * What `crux doctor` learns of one journal (store-boundary.ts, JournalFacts) from one quiet, verifying fold of it:
 * its check report, the times of its records, its state and whether compaction is overdue. `watch` sees each
 * record too (a data directory's index estimate of the live bytes, used where the spec has none).
 */
export async function surveyJournal<S>(
  journal: LinesSource,
  spec: StoreSpec<S>,
  quarantined: () => Promise<number>,
  watch?: { appended(record: JournalRecord, at: LinePosition): void; readonly live: number },
): Promise<JournalFacts<S>> {
  const started = performance.now();
  const clock = new ClockWatch();
  const state = spec.initial();
  let compactedAt: string | null = null;
  // The times are the record's, taken as it is read: what the verifier holds of a batch is the spec's to say (kept).
  const kept = spec.kept;
  const held = (record: JournalRecord, at: LinePosition) => ({
    ts: record.ts,
    first: at.line === 1 && record.ev === SNAPSHOT_EVENT,
    item: kept === undefined ? record : kept.keep(record, at),
  });
  const scan = await journal.scan(
    spec.vocabulary,
    ({ ts, first, item }: ReturnType<typeof held>, at) => {
      if (first) compactedAt = ts;
      if (kept !== undefined) kept.evolve(state, item, at);
      else {
        spec.evolve(state, item as JournalRecord, at);
        watch?.appended(item as JournalRecord, at);
      }
      clock.see(ts, at.line);
    },
    { keep: held },
  );
  const live = spec.liveBytes?.(state) ?? watch?.live;
  return {
    ...reportOf(spec.file, scan, await quarantined(), performance.now() - started),
    newest_ts: clock.newest,
    last_ts: clock.last,
    backwards: clock.backwards,
    // What the fold keeps of its state once the journal is folded (the rest is released before the next journal).
    state: kept?.finish === undefined ? state : (kept.finish(state) as S),
    live_bytes: live ?? null,
    compaction_due: compactionDue(scan.bytes, live),
    compacted_at: compactedAt,
    index: null,
  };
}
