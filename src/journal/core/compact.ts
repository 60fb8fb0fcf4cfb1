// `journal compact` and the automatic compaction after a write, on any kind of store (SPEC §3, §11): a journal
// rewritten to its live records after a snapshot record that continues the old chain; the old journal kept as a
// history piece, each record once; a journal with nothing dead left as it is (the rules: policy.ts). It takes
// the one record-rewrite path (rewrite.ts).
import { EMPTY_HEAD } from '../codec/record';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { ProgressSink } from '../codec/reporting';
import { compactionText, planCompaction } from './policy';
import type { Folded, LineStore, LockedLines } from './line-store';
import { rewriteJournal } from './rewrite';
import type { CompactReport } from './store-boundary';

/**
 * Compacts every journal under one hold of the lock, then applies history retention (all of it deleted with
 * `dropHistory`). `auto`: the compaction after a write, which runs on a journal only if it is still due under the lock.
 */
export async function compactJournals(
  store: LineStore,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  opts: { progress?: ProgressSink | undefined; dropHistory?: boolean | undefined; auto?: boolean },
): Promise<CompactReport[]> {
  return store.locked(async (lines) => {
    const reports: CompactReport[] = [];
    for (const spec of specs) {
      if (opts.auto === true && lines.stillDue !== undefined && !(await lines.stillDue(spec))) continue;
      reports.push(await compactJournal(lines, spec, await lines.fold(spec, opts.progress), ts, { auto: opts.auto }));
    }
    await lines.pruneHistory(ts, opts.dropHistory === true);
    return reports;
  });
}

/** Rewrites one journal (folded whole as `folded`, under the lock) to its live records; prunes nothing. */
export async function compactJournal<S>(
  lines: LockedLines,
  spec: StoreSpec<S>,
  folded: Folded<S>,
  ts: string,
  opts: { auto?: boolean } = {},
): Promise<CompactReport> {
  const name = journalName(spec.file);
  const before = { records: folded.records, bytes: folded.bytes };
  const unchanged = { name, file: spec.file, before, after: before };
  if (folded.lines === 0) return unchanged;
  if (folded.damaged) throw lines.damaged(spec.file, 'compaction');
  await lines.sweep?.(spec.file, ts);
  const live = spec.live(folded.state);
  const first = await lines.first(spec.file);
  const plan = planCompaction({ records: folded.records, first, tornTail: folded.tornTail !== undefined }, live.length, await lines.historyHead(spec.file));
  if (!plan.rewrite) {
    if (opts.auto === true) await lines.nothingDead?.(spec as StoreSpec<unknown>, folded);
    return unchanged;
  }
  const bytes = await rewriteJournal(lines, spec, folded, ts, {
    text: compactionText(folded.head, before, live, ts),
    note: 'compacted',
    state: folded.state,
    archive: { leaveOut: plan.leaveOut, firstSeq: first?.seq ?? EMPTY_HEAD.seq + 1 },
  });
  return { name, file: spec.file, before, after: { records: live.length + 1, bytes } };
}
