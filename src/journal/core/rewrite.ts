// The one record-rewrite path: a journal's new lines put in its place all at once, under the lock, on any kind of
// store (LockedLines.replace: a crash at any moment leaves the old journal or the new one, never a mixture).
// Compaction takes it (compact.ts), keeping the old journal as a history piece; a per-record transform
// (rewriteRecords: `journal redact`, `encrypt`, `rekey`) takes it too, re-chaining every record after its change.
import type { JournalRecord } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import { rechain } from './policy';
import type { ArchivePlan, Folded, LineStore, LockedLines } from './line-store';

/**
 * Puts `change.text` in place of a journal folded whole as `folded` (damage refused before): with `archive`, the
 * old journal kept as a history piece (a torn tail goes to quarantine, not history); then its derived data rebuilt
 * from `change.state` (the new journal's state; undefined: the store folds the new journal).
 */
export async function rewriteJournal<S>(
  lines: LockedLines,
  spec: StoreSpec<S>,
  folded: Folded<S>,
  ts: string,
  change: { text: string; note: string; state: S | undefined; archive?: { leaveOut: { from: number; to: number } | undefined; firstSeq: number } },
): Promise<number> {
  const torn = folded.tornTail;
  if (torn !== undefined) await lines.quarantine(spec.file, `tail-at-${torn.offset}`, await lines.bytes(spec.file, torn), ts);
  const archive: ArchivePlan | undefined =
    change.archive === undefined
      ? undefined
      : {
          head: folded.head,
          ts,
          firstSeq: change.archive.firstSeq,
          leaveOut: change.archive.leaveOut,
          end: torn?.offset ?? folded.bytes,
          whole: change.archive.leaveOut === undefined && torn === undefined,
        };
  const bytes = await lines.replace(spec as StoreSpec<unknown>, change.text, { ...(archive ? { archive } : {}), note: change.note });
  await lines.rewritten(spec, change.state);
  return bytes;
}

/** A per-record change: the record as it is to be (its event, data, actor and time), or undefined to keep it. */
export type RecordTransform = (record: JournalRecord, spec: StoreSpec<unknown>) => JournalRecord | undefined;

export interface RewriteReport {
  readonly file: string;
  readonly records: number;
  /** Records the transform changed (0: the journal was left as it was). */
  readonly changed: number;
}

/**
 * Passes every record of each journal through `transform` under one hold of the lock and, where any changed,
 * re-chains them all from the head the journal started at (a compacted journal's snapshot names it: the journal
 * still continues its history) and puts them in the journal's place, all at once; `note` says what for (the
 * commit log, `redacted`). The old records are not kept as history (a redaction must not keep them); the history
 * already kept stays as it is. A journal with damaged lines is refused (`doing`: what the refusal calls the rewrite).
 */
export async function rewriteRecords(
  store: LineStore,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  transform: RecordTransform,
  opts: { note: string; doing: string },
): Promise<RewriteReport[]> {
  return store.locked(async (lines) => {
    const reports: RewriteReport[] = [];
    for (const spec of specs) {
      const folded = await lines.fold(spec);
      if (folded.damaged) throw lines.damaged(spec.file, opts.doing);
      const records: JournalRecord[] = [];
      let changed = 0;
      await lines.journal(spec.file).scan(spec.vocabulary, (record) => {
        const after = transform(record, spec);
        if (after !== undefined) changed += 1;
        records.push(after ?? record);
      });
      if (changed > 0) {
        await lines.sweep?.(spec.file, ts);
        await rewriteJournal(lines, spec, folded, ts, { text: rechain(records, ts), note: opts.note, state: undefined });
      }
      reports.push({ file: spec.file, records: records.length, changed });
    }
    return reports;
  });
}
