// One write transaction under the lock: load stores (whole, or by key), append, then keep the key index and
// compact a journal that has become mostly dead.
import { appendRecords } from './append';
import { sealDrafts } from '../codec/cipher';
import { decodeOwn, EMPTY_HEAD, encodeRecords, PROGRESS_EVERY, type EventDraft, type JournalRecord } from '../codec/record';
import { rebuildIndex, replayFull, type Loaded, type Reporter } from './load';
import { derivedFiles, isDerivedDamage } from '../derived';
import type { LinePosition, TornTail } from '../codec/scan';
import type { IndexQuery, StoreSpec } from '../codec/store-spec';
import type { Transaction } from '../core/store-boundary';
import { noteCommit } from '../../shared/commit-log';
import { CruxError } from '../../shared/errors';

import { compactionDue, refuseLateKeyLoad, refuseSecondAppend, refuseWholeAfterKey } from '../core/policy';

export { COMPACT_MAX_LIVE_FRACTION, COMPACT_MIN_BYTES } from '../core/policy';

/** What a transaction needs from its data directory. */
export interface TransactionHost {
  readonly root: string;
  readonly reporter: Reporter;
  path(file: string): string;
  compactLoaded<S>(spec: StoreSpec<S>, loaded: Loaded<S>, ts: string): Promise<unknown>;
}

/** Applies freshly encoded records to a state, as replay would; returns their positions. */
function applyEncoded<S>(
  spec: StoreSpec<S>,
  state: S,
  text: string,
  line: number,
  offset: number,
  onProgress?: (done: number, total: number) => void,
): { at: LinePosition; record: JournalRecord }[] {
  const applied: { at: LinePosition; record: JournalRecord }[] = [];
  const lines = text.split('\n').slice(0, -1);
  for (const lineText of lines) {
    if (onProgress !== undefined && applied.length % PROGRESS_EVERY === 0) onProgress(applied.length, lines.length);
    line += 1;
    const length = Buffer.byteLength(lineText);
    const record = decodeOwn(lineText);
    const at = { line, offset, length };
    spec.evolve(state, record, at);
    applied.push({ at, record });
    offset += length + 1;
  }
  return applied;
}

/** Decides against empty stores without touching the disk: used before a data directory exists. */
export class DryTransaction implements Transaction {
  wrote = false;
  private readonly states = new Map<StoreSpec<any>, unknown>();
  private readonly appended = new Set<StoreSpec<any>>();
  constructor(readonly ts: string) {}
  /** Every load, whole or by key, is of the empty store. */
  readonly load = async <S>(spec: StoreSpec<S>): Promise<S> => this.stateOf(spec);
  readonly loadKey = this.load;
  readonly loadIndexed = this.load;
  readonly loadTerms = this.load;
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    refuseSecondAppend(spec, this.appended.has(spec));
    this.appended.add(spec);
    this.wrote = true;
    applyEncoded(spec, this.stateOf(spec), encodeRecords(EMPTY_HEAD, drafts, this.ts, { batch: true }).text, 0, 0);
  }
  private stateOf<S>(spec: StoreSpec<S>): S {
    if (!this.states.has(spec)) this.states.set(spec, spec.initial());
    return this.states.get(spec) as S;
  }
}

/** An append decided but not yet written: where the journal ended before it, and the encoded batch. */
interface Pending {
  readonly bytes: number;
  readonly tornTail: TornTail | undefined;
  readonly text: string;
  /** How many records (lines) `text` holds. */
  readonly records: number;
}

export class LockedTransaction implements Transaction {
  private readonly loaded = new Map<StoreSpec<any>, Loaded<any>>();
  /** Appends in the order of each store's first append: the order they are written in. */
  private readonly pending = new Map<StoreSpec<any>, Pending>();

  constructor(
    private readonly host: TransactionHost,
    readonly ts: string,
  ) {}

  async load<S>(spec: StoreSpec<S>): Promise<S> {
    return this.loadWhole(spec).state;
  }

  async loadKey<S>(spec: StoreSpec<S>, ...keys: string[]): Promise<S> {
    return this.loadSome(spec, { keys });
  }

  async loadIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.loadSome(spec, { query });
  }

  /** The whole state: its snapshot already reads only the terms' postings on demand. */
  readonly loadTerms = this.load;

  private loadSome<S>(spec: StoreSpec<S>, what: { keys: readonly string[] } | { query: IndexQuery }): S {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded.state;
    if (loaded !== undefined) refuseLateKeyLoad(spec);
    // No index that verifies: rebuilt by streaming (bounded memory) unless the journal is damaged, which the
    // whole replay then reports.
    // With `keep`, the index stays open in the result for the appends after it (close: Loaded.index.release).
    const derived = derivedFiles(this.host.root, spec);
    const through = () => ('keys' in what ? derived.findKeys(what.keys, { keep: true }) : derived.candidates(what.query, { keep: true }));
    const some = through() ?? (rebuildIndex(this.host.root, spec, [], this.host.reporter, { quiet: true, needIndex: true })?.built ? through() : undefined);
    if (some === undefined) return this.loadWhole(spec).state;
    this.loaded.set(spec, some);
    return some.state;
  }

  private loadWhole<S>(spec: StoreSpec<S>): Loaded<S> {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded;
    if (loaded !== undefined) refuseWholeAfterKey(spec);
    const path = this.host.path(spec.file);
    // Read on demand (a retrieve that marks its results reads its terms' postings, not 150 MB at 1M cases): a page
    // that does not verify throws DerivedDamage out of the decision, which then runs again over a replay.
    // No snapshot that verifies (cache/ lost): built by streaming the journal in bounded memory where it pays.
    const derived = derivedFiles(this.host.root, spec);
    const fromSnapshot = derived.snapshot({ lazy: true }) ?? (derived.streamSnapshot(true)?.built ? derived.snapshot({ lazy: true }) : undefined);
    let whole: Loaded<S>;
    if (fromSnapshot === undefined) whole = replayFull(path, spec, this.host.reporter);
    else {
      // The index is kept after this write if it verifies (else it stays a prefix the tail completes).
      const viaIndex = spec.keyOf === undefined ? undefined : derived.findKeys([], { keep: true });
      whole = viaIndex?.index === undefined ? fromSnapshot : { ...fromSnapshot, index: viaIndex.index };
    }
    this.loaded.set(spec, whole);
    return whole;
  }

  /**
   * After a decision that failed on damage in a snapshot read on demand: drops the snapshots this transaction
   * read, so that the decision run again loads from the journals. False for any other failure.
   */
  dropDamagedSnapshots(error: unknown): boolean {
    if (!isDerivedDamage(error)) return false;
    for (const [spec, loaded] of this.loaded) if (loaded.source === 'snapshot') derivedFiles(this.host.root, spec).dropSnapshot();
    return true;
  }

  /** Closes what the loads kept open; call once the transaction is over, whatever its outcome. */
  close(): void {
    for (const loaded of this.loaded.values()) {
      loaded.index?.release();
      loaded.release?.();
    }
  }

  /** Encodes the drafts as one batch and applies them to the loaded state; `commit` writes them. */
  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    refuseSecondAppend(spec, this.pending.has(spec));
    const loaded = (this.loaded.get(spec) ?? this.loadWhole(spec)) as Loaded<S>;
    const report = this.host.reporter.progress?.bind(this.host.reporter);
    const { text, head } = encodeRecords(loaded.head, sealDrafts(spec as StoreSpec<unknown>, drafts), this.ts, {
      batch: true,
      onProgress: report && ((done, total) => report('encoding', done, total)),
    });
    // Apply what will be written, so later steps of this transaction see it, and note it for the index.
    const start = loaded.tornTail?.offset ?? loaded.bytes;
    const applied = applyEncoded(
      spec,
      loaded.state,
      text,
      loaded.tornTail ? loaded.tornTail.line - 1 : loaded.lines,
      start,
      report && ((done, total) => report('applying', done, total)),
    );
    this.pending.set(spec, { bytes: loaded.bytes, tornTail: loaded.tornTail, text, records: applied.length });
    const index = loaded.index;
    if (index !== undefined) for (const { at, record } of applied) index.appended(record, at);
    loaded.head = head;
    loaded.headAt = applied.at(-1)!.at;
    loaded.bytes = start + Buffer.byteLength(text);
    loaded.lines = applied.at(-1)!.at.line;
    loaded.records += applied.length;
    loaded.tornTail = undefined;
  }

  /** Writes every pending batch (one write and one fsync each, in order), then keeps the caches. */
  async commit(): Promise<void> {
    this.host.reporter.progress?.('writing', 0, 1);
    for (const [spec, batch] of this.pending) {
      const path = this.host.path(spec.file);
      const quarantined = appendRecords({
        root: this.host.root,
        file: spec.file,
        path,
        text: batch.text,
        ts: this.ts,
        expectedSize: batch.bytes,
        tornTail: batch.tornTail,
      });
      if (quarantined !== undefined) {
        const torn = batch.tornTail!;
        const what = torn.batch === undefined ? 'an unterminated tail' : `an incomplete batch (${torn.batch.seen} of ${torn.batch.want} records)`;
        this.host.reporter.warn(`${path}: moved ${what} of ${torn.length} bytes at offset ${torn.offset} (a write that never completed) to ${quarantined}`);
      }
    }
    if (this.pending.size > 0) noteCommit([...this.pending].map(([spec, batch]) => `${batch.records} record(s) to ${spec.file}`).join(', '));
    await this.finish();
  }

  /** After the decision: keep the derived files of every appended store, and compact where mostly dead. */
  private async finish(): Promise<void> {
    for (const spec of this.pending.keys()) {
      const loaded = this.loaded.get(spec)!;
      if (loaded.damaged) {
        // No cache and no compaction over damage: every later command replays (and reports) it until
        // `journal check --repair` quarantines it.
        derivedFiles(this.host.root, spec).drop();
        continue;
      }
      const live = loaded.index?.live ?? spec.liveBytes?.(loaded.state);
      if (compactionDue(loaded.bytes, live)) {
        await this.compactAfterCommit(spec, loaded);
        continue;
      }
      derivedFiles(this.host.root, spec).keep(loaded, { writer: true });
    }
  }

  /**
   * The automatic compaction after a committed write. It is upkeep: whatever stops it (a history/ that cannot be
   * read, a full disk) is one warning, never a failure of the write, which is durable (a retry would repeat it).
   */
  private async compactAfterCommit<S>(spec: StoreSpec<S>, loaded: Loaded<S>): Promise<void> {
    try {
      // Compaction needs every record's payload: only a verifying replay gives it.
      const whole = loaded.source === 'replay' ? loaded : replayFull(this.host.path(spec.file), spec, this.host.reporter, { quiet: true });
      if (!whole.damaged) await this.host.compactLoaded(spec, whole, this.ts);
    } catch (error) {
      if (!(error instanceof CruxError)) throw error;
      derivedFiles(this.host.root, spec).drop();
      this.host.reporter.warn(
        `${spec.file}: the write is committed, but its automatic compaction did not run: ${error.message} (run \`crux journal compact\` once that is fixed)`,
      );
    }
  }
}
