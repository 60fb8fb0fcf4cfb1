// A data directory as a kind of store (store-boundary.ts): reads replay a journal (or answer through the derived layer);
// writes run inside the lock as one transaction. (Past 300 lines: the whole boundary of one kind of store, over modules.)
//
// The journal layer, bottom up: codec/ (the record, its verification, a file's replay); core/ (the rules both
// kinds of store keep, written once over a line store: dir-lines.ts here); this folder (lock/, append, rewrite,
// quarantine, history, transaction, this file); derived/ (fenced, verified before trusted); pg/.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { acquireLock, type HeldLock } from './lock/lock';
import { pathExists } from '../../shared/durable-fs';
import { createDataDir, initDataDir, removeIfEmpty, restoreJournal } from './dir-create';
import { withTotal, type LinePosition, type ScanResult, type TornTail } from '../codec/scan';
import type { JournalRecord } from '../codec/record';
import { fileLines } from './line-stream';
import { checkJournals } from '../core/check';
import { compactJournal, compactJournals } from '../core/compact';
import { rewriteRecords } from '../core/rewrite';
import { readDirHistory } from './history-keys';
import type { LineStore, LockedLines } from '../core/line-store';
import { DirLines, finishRewrite } from './dir-lines';
import { rebuildIndex, replayFull, type Loaded, type Reporter } from './load';
import { derivedFiles, takeUnusable } from '../derived';
import { DryTransaction, LockedTransaction, type TransactionHost } from './transaction';
import type { IndexQuery, NewestQuery, StoreSpec } from '../codec/store-spec';
import type {
  CompactReport,
  HistoryPiece,
  InitReport,
  JournalReport,
  JournalStore,
  ProgressSink,
  StoreFacts,
  StoreView,
  Transaction,
} from '../core/store-boundary';
import { readHistoryPieces } from './history-copy';
import { DirKeyStore } from './key-files';
import { surveyStore } from './probes';
import { DEFAULT_HISTORY_RETENTION, type HistoryRetention } from './history';
import { CruxError } from '../../shared/errors';
import { reportTornTail, trustedRead } from './torn-tail';
import { reportDamage } from '../codec/reporting';
import { openJournalFile } from '../../shared/journal-file';

export type { Reporter } from './load';
export { COMPACT_MAX_LIVE_FRACTION, COMPACT_MIN_BYTES } from './transaction';
/** A data directory: the journals as files, the lock, keys/, quarantine/ and cache/ (SPEC §3). */
export class DataDir implements JournalStore, TransactionHost, LineStore {
  readonly keys: DirKeyStore;
  /** What check, compaction and history reads (core/) do to the files, the lock held. */
  readonly lines = new DirLines(this);

  constructor(
    readonly root: string,
    readonly reporter: Reporter,
    private readonly lockTimeoutMs: number,
    readonly historyRetention: HistoryRetention = DEFAULT_HISTORY_RETENTION,
  ) {
    this.keys = new DirKeyStore(root);
  }

  get location(): string {
    return this.root;
  }

  exists(): boolean {
    return pathExists(this.root);
  }

  path(file: string): string {
    return join(this.root, file);
  }

  /** Replays a store without the lock, for queries. A missing directory or file is an empty store. */
  async read<S>(spec: StoreSpec<S>): Promise<S> {
    return this.told(async () => {
      const derived = derivedFiles(this.root, spec);
      const fromSnapshot = derived.snapshot() ?? (this.streamed(spec) ? derived.snapshot() : undefined);
      if (fromSnapshot !== undefined) {
        // A long tail past the snapshot: this reader writes the next one.
        derived.keep(fromSnapshot, { writer: false });
        return (await this.tellTorn(spec, fromSnapshot)).state;
      }
      return (await this.tellTorn(spec, this.replayAndKeep(spec))).state;
    });
  }

  /**
   * Runs `use` over the store's state, read without the lock. The state may read its snapshot on demand
   * while `use` runs (a retrieve reads only its terms' postings); if a page of it turns out damaged, the
   * store is replayed and `use` runs again on the replayed state, so the answer is always a replay's.
   */
  async readWith<S, T>(spec: StoreSpec<S>, use: (state: S) => T | Promise<T>): Promise<T> {
    return this.told(async () => {
      const derived = derivedFiles(this.root, spec);
      const viaSnapshot = (await derived.readWith(use)) ?? (this.streamed(spec) ? await derived.readWith(use) : undefined);
      if (viaSnapshot !== undefined) {
        await this.tellTorn(spec, viaSnapshot);
        return viaSnapshot.answer;
      }
      const replayed = this.replayAndKeep(spec);
      const answer = await use(replayed.state);
      await this.tellTorn(spec, replayed);
      return answer;
    });
  }

  /** Its snapshot already reads only the terms' postings on demand (readWith): the terms ask nothing more of it. */
  async readTerms<S, T>(spec: StoreSpec<S>, _query: { readonly terms: readonly string[] }, use: (state: S) => T | Promise<T>): Promise<T> {
    return this.readWith(spec, use);
  }

  /** `loaded`, after a torn tail it passed over is reported, unless a writer is writing it (torn-tail.ts). */
  private async tellTorn<L extends Pick<Loaded<unknown>, 'tornTail'>>(spec: StoreSpec<unknown>, loaded: L): Promise<L> {
    await reportTornTail(this.root, this.path(spec.file), spec.file, loaded.tornTail, this.reporter);
    return loaded;
  }

  /** A full replay for a reader, which then writes the derived files it found missing or unusable. */
  private replayAndKeep<S>(spec: StoreSpec<S>): Loaded<S> {
    const loaded = this.replay(spec);
    if (loaded.scan.exists && (spec.keyOf !== undefined || spec.snapshot !== undefined)) {
      derivedFiles(this.root, spec).keep(loaded, { writer: false });
    }
    return loaded;
  }

  /** Every record the store's journal ever kept, history/ first; of the journal, `key`'s lines alone when the index verifies. */
  async readHistory<S>(spec: StoreSpec<S>, sink: (record: JournalRecord, at: LinePosition) => void, { key }: { key?: string } = {}): Promise<void> {
    const byKey = key === undefined ? undefined : async () => (await trustedRead(this.root, derivedFiles(this.root, spec).keyRecords(key)))?.records;
    return this.told(() => readDirHistory(this.root, this.lines, spec, sink, key, byKey));
  }

  /** The records at these positions of a store's journal (undefined where the line is not a record). */
  async readAt<S>(spec: StoreSpec<S>, positions: readonly LinePosition[]): Promise<(JournalRecord | undefined)[]> {
    return this.told(async () => {
      let fd: number;
      try {
        fd = openJournalFile(this.path(spec.file));
      } catch {
        return positions.map(() => undefined);
      }
      const derived = derivedFiles(this.root, spec);
      try {
        return positions.map((at) => derived.read(fd, at));
      } finally {
        fs.closeSync(fd);
      }
    });
  }

  /**
   * A state holding at least the entity `key`: through the index when it verifies, else from the scan that
   * rebuilds it (bounded memory), else (a store without a key index) a full replay.
   */
  async readKey<S>(spec: StoreSpec<S>, key: string): Promise<S> {
    return this.told(async () => {
      const found = await trustedRead(this.root, derivedFiles(this.root, spec).findKeys([key]));
      const loaded = found ?? rebuildIndex(this.root, spec, [key], this.reporter) ?? this.replayAndKeep(spec);
      return (await this.tellTorn(spec, loaded)).state;
    });
  }

  /** Whether a whole new snapshot was just built by streaming the journal (bounded memory); false over damage, which the replay then reports. */
  private streamed(spec: StoreSpec<unknown>): boolean {
    return derivedFiles(this.root, spec).streamSnapshot(false)?.built === true;
  }

  /** `read` through the index if trusted (trustedRead), else again once it stands rebuilt by streaming; undefined: replay (it reports). */
  private async through<T extends { gap?: number }>(spec: StoreSpec<unknown>, read: () => T | undefined): Promise<T | undefined> {
    return (
      (await trustedRead(this.root, read())) ?? (rebuildIndex(this.root, spec, [], this.reporter, { quiet: true, needIndex: true })?.built ? read() : undefined)
    );
  }

  /**
   * A state holding at least every entity that may match `query` (some that do not, too: filter exactly),
   * through the index when it verifies, else a full replay.
   */
  async readIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.stateThrough(spec, () => derivedFiles(this.root, spec).candidates(query));
  }

  /**
   * A state holding, highest value first, the entities whose value of the ordered secondary key `query.index`
   * is at most `query.atMost`, at least until `enough(state)` (the caller filters exactly and cuts), and how
   * many there are in all (`total`, from the index, without reading them; not counted when `query.count` is
   * false); a full replay (total undefined) when the index does not verify.
   */
  async readNewest<S>(spec: StoreSpec<S>, query: NewestQuery, enough: (state: S) => boolean): Promise<{ state: S; total: number | undefined }> {
    return this.told(async () => {
      const derived = derivedFiles(this.root, spec);
      const { state, total, tornTail } = (await this.through(spec, () => derived.newest(query, enough))) ?? { ...this.replayAndKeep(spec), total: undefined };
      await this.tellTorn(spec, { tornTail });
      return { state, total };
    });
  }

  /** JournalStore.readTally: through the index if trusted (rebuilt by streaming if not); undefined over damage. */
  async readTally(spec: StoreSpec<unknown>, from: number, to: number): Promise<number[][] | undefined> {
    return this.told(async () => {
      const read = await this.through(spec, () => derivedFiles(this.root, spec).tally(from, to));
      await this.tellTorn(spec, { tornTail: read?.tornTail });
      return read?.counts;
    });
  }

  /**
   * A state holding, in the order of their values, the entities whose value of the prefixed key `query.index`
   * starts with `query.prefix`, at least until `enough(state)` (the caller filters exactly and cuts); when the
   * index does not verify, it is rebuilt by streaming first (a full replay over damage).
   */
  async readPrefix<S>(spec: StoreSpec<S>, query: { index: string; prefix: string }, enough: (state: S) => boolean): Promise<S> {
    return this.stateThrough(spec, () => derivedFiles(this.root, spec).prefix(query, enough));
  }

  /** The state `read` gives through the index (through), else a full replay's; a torn tail passed over is told. */
  private async stateThrough<S>(spec: StoreSpec<S>, read: () => { state: S; tornTail: TornTail | undefined; gap?: number } | undefined): Promise<S> {
    return this.told(async () => (await this.tellTorn(spec, (await this.through(spec, read)) ?? this.replayAndKeep(spec))).state);
  }

  /**
   * Runs `decide` as one write transaction under the lock. Against a directory that does not exist yet,
   * `decide` first runs against empty stores without creating anything: a refused command leaves no trace.
   */
  async write<T>(decide: (tx: Transaction) => T | Promise<T>, ts: string): Promise<T> {
    return this.told(async () => {
      if (!this.exists()) {
        const dry = new DryTransaction(ts);
        const result = await decide(dry);
        if (!dry.wrote) return result;
        const created = createDataDir(this.root);
        try {
          return await this.writeLocked(decide, ts, true);
        } catch (error) {
          // The first write failed (a full disk, say): leave no directory behind where there was none.
          removeIfEmpty(created);
          throw error;
        }
      }
      return await this.writeLocked(decide, ts);
    });
  }

  /** `first`: the directory was created for this write; if it fails, the lock directory goes too. */
  private async writeLocked<T>(decide: (tx: Transaction) => T | Promise<T>, ts: string, first = false): Promise<T> {
    const lock = await this.lock();
    let ok = false;
    try {
      for (let attempt = 0; ; attempt++) {
        const tx = new LockedTransaction(this, ts);
        try {
          let result: T;
          try {
            result = await decide(tx);
          } catch (error) {
            // Damage in a snapshot read on demand, found while deciding (nothing is written yet): decide again from the journals.
            if (attempt === 0 && tx.dropDamagedSnapshots(error)) continue;
            throw error;
          }
          await tx.commit();
          ok = true;
          return result;
        } finally {
          tx.close();
        }
      }
    } finally {
      await lock.release({ dropDir: first && !ok });
    }
  }

  private lock(): Promise<HeldLock> {
    return acquireLock(this.root, this.lockTimeoutMs, { warn: (message) => this.reporter.warn(message) }).then((held) => finishRewrite(this.root, held));
  }

  /** Doctor's facts, gathered under the lock when it is free. */
  async survey(specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
    return this.told(() => surveyStore(this.root, this.lines, specs));
  }

  /** What `run` returns, once each derived file it found unusable is told of (tellUnusable), however it ends. */
  private async told<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } finally {
      this.tellUnusable();
    }
  }

  /** One line for each derived file (or cache/ itself) found unusable: it was bypassed, the answer is a replay's. */
  private tellUnusable(): void {
    for (const { file, reason } of takeUnusable()) {
      reportDamage(this.reporter, { file, line: 0, reason }, `${join(this.root, file)} ${reason} (answers come from the journals)`);
    }
  }

  rawLines(file: string): AsyncIterable<Uint8Array> {
    return fileLines(this.path(file));
  }

  /**
   * Streams `lines` into a new journal (nothing visible until the last is durable), then its history: one source at
   * a time, as a StoreView wants (a database's cursors share one connection).
   */
  async restore(file: string, lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, history: readonly HistoryPiece[] = []): Promise<void> {
    await restoreJournal(this.root, () => this.lock(), file, lines, history);
  }

  /** `journal copy`'s source: the journals and their history under the lock (store-boundary.ts). */
  async readConsistent<T>(use: (view: StoreView) => Promise<T>, opts: { readOnly?: boolean } = {}): Promise<T> {
    const view: StoreView = { lines: (file) => this.rawLines(file), history: async (file) => readHistoryPieces(this.root, file) };
    return this.locked(() => use(view), opts);
  }

  /**
   * Runs `fn` under the lock if the directory exists (check, compact, repair: core/); as it is if not. `readOnly`
   * (a check): where the lock cannot be taken for want of write access, `fn` runs without it, and a line says so.
   */
  async locked<T>(fn: (lines: LockedLines) => Promise<T>, opts: { readOnly?: boolean } = {}): Promise<T> {
    if (!this.exists()) return fn(this.lines);
    let lock: HeldLock;
    try {
      lock = await this.lock();
    } catch (error) {
      if (!(opts.readOnly && error instanceof CruxError && error.kind === 'permission_denied')) throw error;
      this.reporter.warn(`${error.message}: verified without the writers' lock, so a live writer could race this check`);
      return fn(this.lines);
    }
    try {
      return await fn(this.lines);
    } finally {
      await lock.release();
    }
  }

  /**
   * Verifies every journal; with `repair`, quarantines bad lines and torn tails and re-chains the rest. Without
   * it, only read access is needed (SPEC §3): where the lock cannot be taken at all (a read-only mount, a
   * directory this user cannot write), the journals are verified without it, and a line says so.
   */
  async check(specs: readonly StoreSpec<unknown>[], opts: { repair: boolean; ts: string; progress?: ProgressSink }): Promise<JournalReport[]> {
    return this.told(async () => {
      const reports = await checkJournals(this, specs, opts);
      // Derived files are never checked as journals are, but one that cannot be used is said.
      if (this.exists()) for (const spec of specs) derivedFiles(this.root, spec).probe();
      return reports;
    });
  }

  rewrite: JournalStore['rewrite'] = (specs, ts, transform, opts) => rewriteRecords(this, specs, ts, transform, opts);

  /** Rewrites every journal to its live records, after a snapshot record naming the old head; the old journal goes to history/. */
  async compact(specs: readonly StoreSpec<unknown>[], ts: string, progress?: ProgressSink, opts: { dropHistory?: boolean } = {}): Promise<CompactReport[]> {
    return this.told(() => compactJournals(this, specs, ts, { progress, dropHistory: opts.dropHistory }));
  }

  /** `crux store init`: the directory and its lock, as the first write would make them (store-boundary.ts). */
  async init(opts: { print: boolean }): Promise<InitReport> {
    return initDataDir(this.root, opts.print);
  }

  /** The automatic compaction after a write, under its lock (TransactionHost); retention applies as after any. */
  async compactLoaded<S>(spec: StoreSpec<S>, loaded: Loaded<S>, ts: string): Promise<CompactReport> {
    const report = await compactJournal(this.lines, spec, loaded, ts);
    await this.lines.pruneHistory(ts, false);
    return report;
  }

  replay<S>(spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink | undefined } = {}): Loaded<S> & { scan: ScanResult } {
    const path = this.path(spec.file);
    const onRecord = opts.progress === undefined ? undefined : withTotal(opts.progress, spec.file, path);
    return replayFull(path, spec, this.reporter, { quiet: opts.quiet, onRecord });
  }

  /**
   * Rebuilds the derived files of a journal just rewritten (compaction, repair) from a replay of it. The old
   * ones are bound to the old file's head record, so until this is done they apply to nothing new.
   */
  reindex<S>(spec: StoreSpec<S>): void {
    if (spec.keyOf === undefined && spec.snapshot === undefined) return;
    const loaded = replayFull(this.path(spec.file), spec, this.reporter, { quiet: true });
    derivedFiles(this.root, spec).keep(loaded, { writer: true });
  }
}
