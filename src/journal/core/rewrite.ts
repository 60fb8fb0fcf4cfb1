// The one record-rewrite path: a journal's new lines put in its place all at once, under the lock, on any kind of
// store (LockedLines.replace: a crash at any moment leaves the old journal or the new one, never a mixture).
// Compaction takes it (compact.ts), keeping the old journal as a history piece; a per-record transform
// (rewriteRecords: `journal redact`, `encrypt`, `rekey`) takes the lineage whole — every history piece, the
// journal, and quarantined items — through a staged rewrite (LockedLines.stage), re-chaining every record after
// its change. Nothing here knows what a transform is for.
import { encodeRecords, type ChainHead, type JournalRecord } from '../codec/record';
import { SNAPSHOT_EVENT } from '../codec/verify';
import type { StoreSpec } from '../codec/store-spec';
import type { ArchivePlan, Folded, LinesSource, LineStore, LockedLines, StagedRewrite } from './line-store';

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

/** Where a record stands: its journal, and the piece of its lineage (the journal itself, or a history piece). */
export interface RecordPlace {
  readonly file: string;
  /** How the piece is named (`sessions.jsonl`, `history/sessions.000000000012.jsonl`). */
  readonly where: string;
  readonly history: boolean;
}

/** A per-record change: the record as it is to be (its event, data, actor and time), or undefined to keep it. */
export type RecordTransform = (record: JournalRecord, spec: StoreSpec<unknown>, place: RecordPlace) => JournalRecord | undefined;

/** A change of a quarantined item's bytes (named as the quarantine names it), or undefined to keep them. */
export type BytesTransform = (bytes: Buffer, name: string) => Uint8Array | undefined;

export interface RewriteReport {
  readonly file: string;
  readonly records: number;
  /** Records of the journal the transform changed (0 with no change in history either: the lineage was left as it was). */
  readonly changed: number;
  /** Its history: pieces, their records, and those the transform changed. */
  readonly history: { readonly pieces: number; readonly records: number; readonly changed: number };
}

export interface RewriteResult {
  readonly journals: RewriteReport[];
  /** Quarantined items seen and changed (both 0 without a BytesTransform). */
  readonly quarantine: { readonly items: number; readonly changed: number };
}

export interface RewriteOptions {
  /** What the commit log says (`redacted`), or what says it once every transform ran. */
  readonly note: string | (() => string);
  /** What a refusal over damage calls the rewrite (`redaction`). */
  readonly doing: string;
  readonly quarantine?: BytesTransform | undefined;
  readonly dryRun?: boolean | undefined;
  /** A key id to record in the same commit (null: none, a decrypted store), where the store keeps it among its rows (LockedLines.recordStoreKey). */
  readonly storeKeyId?: string | null | undefined;
}

/** The lineage's last record before the piece being rewritten: its head as it was, and as rewritten. */
interface Link {
  readonly old: ChainHead;
  readonly now: ChainHead;
}

/**
 * Re-encodes a piece's records (each as `transform` changed it, or as it was) down the chain from `link`: a record
 * that followed the lineage's last record follows it as rewritten; one that did not (a chain's start, the record
 * after a snapshot's restatements left out of history, the oldest piece left after retention) starts where it
 * started, and an opening snapshot names the head it now continues. Batches stay batches; a record whose data and
 * place are unchanged comes out byte for byte as it was. `changed`: whether any line differs.
 */
function relink(
  pairs: readonly (readonly [JournalRecord, JournalRecord])[],
  link: Link | undefined,
  ts: string,
): { text: string; link: Link | undefined; changed: boolean } {
  let text = '';
  let changed = false;
  let last = link;
  for (let i = 0; i < pairs.length; ) {
    const [first] = pairs[i]!;
    const n = first.batch !== undefined && isRun(pairs, i, first.batch) ? first.batch : 1;
    const group = pairs.slice(i, i + n);
    const follows = last !== undefined && first.p === last.old.h && first.seq === last.old.seq + 1;
    const from: ChainHead = follows ? last!.now : { seq: first.seq - 1, h: first.p };
    const drafts = group.map(([, after], k) => {
      const named = k === 0 && after.ev === SNAPSHOT_EVENT ? (after.data as { previous_head?: ChainHead } | null)?.previous_head : undefined;
      const data = named !== undefined && named.seq === first.seq - 1 && named.h === first.p ? { ...after.data, previous_head: from } : after.data;
      return { ev: after.ev, data, actor: after.actor, ts: after.ts };
    });
    const encoded = encodeRecords(from, drafts, ts, { batch: n > 1 });
    const [lastBefore] = group[group.length - 1]!;
    if (encoded.head.h !== lastBefore.h) changed = true;
    text += encoded.text;
    last = { old: { seq: lastBefore.seq, h: lastBefore.h }, now: encoded.head };
    i += n;
  }
  return { text, link: last, changed };
}

/** Whether the `n` records from `i` on are one run of consecutive sequence numbers (a batch as it was written). */
function isRun(pairs: readonly (readonly [JournalRecord, JournalRecord])[], i: number, n: number): boolean {
  if (i + n > pairs.length) return false;
  for (let k = 1; k < n; k++) if (pairs[i + k]![0].seq !== pairs[i]![0].seq + k) return false;
  return true;
}

/** One piece's records through `transform`, in order: each as it was and as it is to be; refused when a line is damaged. */
async function transformed(
  lines: LockedLines,
  source: LinesSource,
  spec: StoreSpec<unknown>,
  place: RecordPlace,
  transform: RecordTransform,
  doing: string,
): Promise<{ pairs: [JournalRecord, JournalRecord][]; changed: number }> {
  const pairs: [JournalRecord, JournalRecord][] = [];
  let changed = 0;
  const scan = await source.scan(
    spec.vocabulary,
    (record) => {
      const after = transform(record, spec, place);
      if (after !== undefined) changed += 1;
      pairs.push([record, after ?? record]);
    },
    { history: place.history },
  );
  if (scan.problems.length > 0) throw lines.damaged(spec.file, place.history ? `${doing} of its history (${source.where})` : doing);
  return { pairs, changed };
}

/** One journal's lineage, oldest piece first, through `transform`; what changed is staged (none: a dry run). */
async function rewriteLineage(
  lines: LockedLines,
  spec: StoreSpec<unknown>,
  ts: string,
  transform: RecordTransform,
  staged: StagedRewrite | undefined,
  doing: string,
): Promise<{ report: RewriteReport; journalChanged: boolean; historyChanged: boolean }> {
  const folded = await lines.fold(spec);
  if (folded.damaged) throw lines.damaged(spec.file, doing);
  const history = { pieces: 0, records: 0, changed: 0 };
  let link: Link | undefined;
  let historyChanged = false;
  for (const piece of await lines.history(spec.file)) {
    const { pairs, changed } = await transformed(lines, piece, spec, { file: spec.file, where: piece.where, history: true }, transform, doing);
    const relinked = relink(pairs, link, ts);
    if (relinked.changed) await staged?.history(spec.file, piece, relinked.text);
    historyChanged ||= relinked.changed;
    link = relinked.link;
    history.pieces += 1;
    history.records += pairs.length;
    history.changed += changed;
  }
  const journal = lines.journal(spec.file);
  const { pairs, changed } = await transformed(lines, journal, spec, { file: spec.file, where: journal.where, history: false }, transform, doing);
  const relinked = relink(pairs, link, ts);
  // A torn tail goes to quarantine as a rewrite of the journal leaves it out (a later quarantine pass sees it).
  const torn = folded.tornTail;
  const journalChanged = relinked.changed || torn !== undefined;
  if (journalChanged && staged !== undefined) {
    if (torn !== undefined) await lines.quarantine(spec.file, `tail-at-${torn.offset}`, await lines.bytes(spec.file, torn), ts);
    await staged.journal(spec, relinked.text);
  }
  return { report: { file: spec.file, records: pairs.length, changed, history }, journalChanged, historyChanged };
}

/**
 * Passes every record of each journal — its history pieces too, oldest first — through `transform` under one hold
 * of the lock and, where any changed, re-chains the lineage from there on (each history piece continues the one
 * before it, the journal the newest, as `journal check` verifies) and puts every changed piece in place at once,
 * all or nothing across the store, the derived data of each changed journal dropped and rebuilt. With `quarantine`,
 * each quarantined item's bytes go through it too, in the same commit. The old records are not kept anywhere (a
 * redaction must not keep them). A journal or history piece with damaged lines is refused (`doing`: what the
 * refusal calls the rewrite). `note`: what the commit log says. `dryRun`: every transform runs, nothing is written.
 */
export async function rewriteRecords(
  store: LineStore,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  transform: RecordTransform,
  opts: RewriteOptions,
): Promise<RewriteResult> {
  const dryRun = opts.dryRun === true;
  return store.locked(
    async (lines) => {
      if (!dryRun) for (const spec of specs) await lines.sweep?.(spec.file, ts);
      const staged = dryRun ? undefined : await lines.stage();
      try {
        const journals: RewriteReport[] = [];
        const rewritten: StoreSpec<unknown>[] = [];
        let any = false;
        for (const spec of specs) {
          const { report, journalChanged, historyChanged } = await rewriteLineage(lines, spec, ts, transform, staged, opts.doing);
          journals.push(report);
          if (journalChanged) rewritten.push(spec);
          any ||= journalChanged || historyChanged;
        }
        const quarantine = { items: 0, changed: 0 };
        if (opts.quarantine !== undefined) {
          for (const item of await lines.quarantineItems()) {
            quarantine.items += 1;
            const after = opts.quarantine(await item.read(), item.name);
            if (after === undefined) continue;
            quarantine.changed += 1;
            await staged?.quarantine(item, after);
          }
        }
        if (staged !== undefined) {
          if (opts.storeKeyId !== undefined) await lines.recordStoreKey?.(opts.storeKeyId);
          if (any || quarantine.changed > 0) await staged.commit(typeof opts.note === 'string' ? opts.note : opts.note());
          else await staged.abort();
          for (const spec of rewritten) await lines.rewritten(spec);
        }
        return { journals, quarantine };
      } catch (error) {
        await staged?.abort();
        throw error;
      }
    },
    { readOnly: dryRun },
  );
}
