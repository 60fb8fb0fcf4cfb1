// `journal check [--repair]`: every journal verified line by line (format, hash, chain, sequence, batches,
// vocabulary, torn tail), its history too; with --repair, bad lines and torn tails go to quarantine/ and the
// rest is re-chained, so that a second check is healthy (SPEC §3).
import { fs } from '../../shared/fs';
import { scanJournal, withTotal, type LinePosition, type ScanResult } from '../codec/scan';
import type { JournalRecord } from '../codec/record';
import { BEFORE_REPAIR, rechain, REMOVED_LINES, removedLineRecord } from '../core/policy';
import { replaceJournal } from './rewrite';
import { listQuarantine, quarantineBytes } from './quarantine';
import { checkHistory } from './history';
import type { JournalDir } from './compact';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { JournalReport, ProgressSink } from '../core/store-boundary';
import { noteCommit } from '../../shared/commit-log';

/** What `journal check` (and `crux doctor`) report of one journal's scan. */
export function reportScan(root: string, file: string, scan: ScanResult): Omit<JournalReport, 'repaired'> {
  return {
    name: journalName(file),
    file,
    exists: scan.exists,
    records: scan.records,
    bytes: scan.bytes,
    problems: scan.problems.map(({ line, reason }) => ({ line, reason })),
    torn_tail: scan.tornTail !== undefined,
    quarantined: listQuarantine(root, file).length,
    replay_ms: Math.round(scan.ms * 10) / 10,
  };
}

export function checkJournal(dir: JournalDir, spec: StoreSpec<unknown>, opts: { repair: boolean; ts: string; progress?: ProgressSink }): JournalReport {
  const kept: { record: JournalRecord; at: LinePosition }[] = [];
  const progress = opts.progress === undefined ? undefined : withTotal(opts.progress, spec.file, dir.path(spec.file));
  // Only a repair needs the records; a check keeps nothing of a batch until it is whole (a 1M-case import is one
  // batch: holding its records took 770 MiB).
  const scan = opts.repair
    ? scanJournal(dir.path(spec.file), spec.vocabulary, (record, at) => {
        progress?.(at);
        kept.push({ record, at });
      })
    : scanJournal(dir.path(spec.file), spec.vocabulary, (_: 0, at) => progress?.(at), undefined, { keep: () => 0 as const });
  const history = checkHistory(dir.root, spec.file, spec.vocabulary, opts);
  const report = { ...reportScan(dir.root, spec.file, scan), ...(history ? { history } : {}) };
  if (!opts.repair || scan.problems.length === 0) return report;
  const quarantine = repairJournal(dir, spec, scan, kept, opts.ts);
  const removed = scan.problems.filter((p) => p.skipped).length;
  // Counted again: what quarantine/ holds now, the repair's own items with it.
  return { ...report, quarantined: listQuarantine(dir.root, spec.file).length, repaired: { removed, quarantine } };
}

function repairJournal(dir: JournalDir, spec: StoreSpec<unknown>, scan: ScanResult, kept: { record: JournalRecord }[], ts: string): string[] {
  const file = spec.file;
  const path = dir.path(file);
  const original = fs.readFileSync(path);
  const removed = scan.problems
    .filter((p) => p.skipped)
    .map((p) => removedLineRecord(p.line, p.offset, p.reason, original.subarray(p.offset, p.offset + p.length)));
  const quarantine = [quarantineBytes(dir.root, file, BEFORE_REPAIR, original, ts)];
  if (removed.length > 0) quarantine.push(quarantineBytes(dir.root, file, REMOVED_LINES, `${removed.join('\n')}\n`, ts));
  replaceJournal(
    dir.root,
    file,
    rechain(
      kept.map((k) => k.record),
      ts,
    ),
  );
  noteCommit(`${file} repaired`);
  dir.reindex(spec);
  return quarantine;
}
