// The journal's rules, kind-neutral: what every store (a data directory, a PostgreSQL schema) decides the same way,
// so that each store only reads and writes. The transaction's refusals, repair's re-chaining, compaction's batch,
// when it runs on its own, when it does nothing and what of the old journal it archives, the quarantine's record of
// a removed line, the clock bound doctor judges by.
import { EMPTY_HEAD, encodeRecords, type ChainHead, type EventDraft, type JournalRecord } from '../codec/record';
import { restatedCount, SNAPSHOT_EVENT } from '../codec/verify';
import type { StoreSpec } from '../codec/store-spec';

export { EMPTY_HEAD, GENESIS } from '../codec/record';

/** The entity a record concerns (StoreSpec.keyOf), none for a compaction's snapshot: what a database's `key` column holds. */
export const entityOf = (spec: StoreSpec<unknown>, record: JournalRecord): string | undefined =>
  record.ev === SNAPSHOT_EVENT ? undefined : spec.keyOf?.(record);

/** Auto-compaction: a journal over this size whose live records need less than half of it is rewritten. */
export const COMPACT_MIN_BYTES = 256 * 1024;
export const COMPACT_MAX_LIVE_FRACTION = 0.5;

/** Whether a journal of `bytes`, of which about `liveBytes` are live, is compacted after a write (and overdue if not). */
export function compactionDue(bytes: number, liveBytes: number | null | undefined): boolean {
  return liveBytes !== null && liveBytes !== undefined && bytes >= COMPACT_MIN_BYTES && liveBytes <= bytes * COMPACT_MAX_LIVE_FRACTION;
}

// The transaction's rules (store-boundary.ts, Transaction): one batch per store, keys loaded before appending.
/** Refuses a second append to one store in one transaction. */
export function refuseSecondAppend(spec: StoreSpec<unknown>, appended: boolean): void {
  if (appended) throw new Error(`${spec.file}: a second append in one transaction (give every draft in one call: one batch)`);
}
/** Refuses a load by key after the store was loaded by key and appended to (the keys must come first). */
export function refuseLateKeyLoad(spec: StoreSpec<unknown>): never {
  throw new Error(`${spec.file}: load every key before the first append`);
}
/** Refuses a whole load after a load by key (an implementation may answer a key load from an index). */
export function refuseWholeAfterKey(spec: StoreSpec<unknown>): never {
  throw new Error(`${spec.file}: a whole load after a load by key in one transaction`);
}

/**
 * Repair's re-chaining: the records that verified, in sequence order and once each (so reordered and duplicated
 * lines are repaired too), encoded again from the head the journal started at (a compacted journal's snapshot
 * names it) with their own times and actors.
 */
export function rechain(kept: readonly JournalRecord[], ts: string): string {
  const seen = new Set<string>();
  const ordered = [...kept].sort((a, b) => a.seq - b.seq).filter((r) => !seen.has(r.h) && seen.add(r.h));
  const first = ordered[0]?.ev === SNAPSHOT_EVENT ? ordered[0] : undefined;
  const start: ChainHead = (first?.data as { previous_head?: ChainHead } | undefined)?.previous_head ?? EMPTY_HEAD;
  const drafts: EventDraft[] = ordered.map((r) => ({ ev: r.ev, data: r.data, actor: r.actor, ts: r.ts }));
  return encodeRecords(start, drafts, ts).text;
}

/**
 * Compaction's batch: a snapshot record naming the old head (and how much it replaces), then the live records.
 * `live_records` says how many records after it restate the live state: history readers pass over them.
 */
export function compactionText(head: ChainHead, before: { records: number; bytes: number }, live: readonly EventDraft[], ts: string): string {
  const snapshot: EventDraft = {
    ev: SNAPSHOT_EVENT,
    data: { previous_head: head, records_before: before.records, bytes_before: before.bytes, live_records: live.length },
  };
  return encodeRecords(head, [snapshot, ...live], ts).text;
}

/**
 * What a compaction does with a journal of `records` records (a first record `first`, a snapshot if the journal
 * was compacted before), whose live state restates as `live` records, when the newest record its history holds
 * has sequence number `historyHead` (undefined: no history).
 *
 * Nothing dead: each live record stands for at least one record of the journal, so when the journal holds no
 * more records than its live state restates (its opening snapshot aside), nothing in it is dead. The rewrite
 * would restate what is there and archive it again: the compaction does nothing (`rewrite: false`).
 *
 * Something dead: the journal is rewritten, and history keeps each record once. The records a compaction wrote
 * to restate the live state (the `live_records` after the journal's opening snapshot) repeat records that
 * history holds, when its newest record is the one just before that snapshot: those are left out of the archive
 * (`leaveOut`, a range of sequence numbers; history readers and check accept the gap they leave, verify.ts).
 * When that history is gone (retention, --drop-history), the restatements are the oldest versions left and
 * are archived with the rest.
 */
export function planCompaction(
  journal: { records: number; first: JournalRecord | undefined; tornTail: boolean },
  live: number,
  historyHead: number | undefined,
): CompactionPlan {
  const snapshot = journal.first?.ev === SNAPSHOT_EVENT ? journal.first : undefined;
  if (!journal.tornTail && live >= journal.records - (snapshot ? 1 : 0)) return { rewrite: false };
  const restated = restatedCount(snapshot);
  if (snapshot === undefined || restated === 0 || historyHead !== snapshot.seq - 1) return { rewrite: true };
  return { rewrite: true, leaveOut: { from: snapshot.seq + 1, to: snapshot.seq + restated } };
}

type CompactionPlan = { readonly rewrite: false } | { readonly rewrite: true; readonly leaveOut?: { readonly from: number; readonly to: number } };

/** The names of what repair keeps in quarantine: the journal as it was, and the lines it removed. */
export const BEFORE_REPAIR = 'before-repair';
export const REMOVED_LINES = 'removed-lines.jsonl';

/**
 * One line of the quarantine's `removed-lines.jsonl`: where the removed line was (its line number, and its byte
 * offset in the journal as a file: on PostgreSQL, the offset it has in `journal copy`'s file), why, its bytes.
 */
export function removedLineRecord(line: number, offset: number, reason: string, bytes: Uint8Array): string {
  return JSON.stringify({ line, offset, reason, bytes_b64: Buffer.from(bytes).toString('base64') });
}

/**
 * How far back a record's time may step from the newest before it without saying the writers' clocks disagree:
 * a writer reads the clock when it starts, before it waits for the lock (CRUX_LOCK_TIMEOUT, 10 s by default), so
 * ordinary concurrent writers on one host step back by up to that wait. A minute is past any lock wait crux
 * allows by default and well under the skews that mislead freshness and expiry.
 */
export const CLOCK_STEP_TOLERANCE_MS = 60_000;

/** Counts the records whose time steps back from the newest before it by more than CLOCK_STEP_TOLERANCE_MS. */
export class ClockWatch {
  newest: string | null = null;
  last: string | null = null;
  private newestMs = -Infinity;
  readonly backwards = { count: 0, first_line: null as number | null };

  see(ts: string, line: number): void {
    const ms = Date.parse(ts);
    this.last = ts;
    if (!Number.isFinite(ms)) return;
    if (ms < this.newestMs - CLOCK_STEP_TOLERANCE_MS) {
      this.backwards.count += 1;
      this.backwards.first_line ??= line;
    }
    if (ms > this.newestMs) {
      this.newestMs = ms;
      this.newest = ts;
    }
  }
}
