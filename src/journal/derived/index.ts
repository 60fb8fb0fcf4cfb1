// The derived layer's one interface: per journal, the files in cache/ that make reads cheap — the index
// (find keys, candidates of a query) and the snapshot — read only once they verify, kept in step with the
// journal after loads and writes, dropped over damage. Nothing outside derived/ sees how they are laid out,
// nor the damage found inside them: a derived file that does not verify is bypassed (the caller replays).
// See each file's header comment and crux-journal(5).
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import type { JournalRecord } from '../codec/record';
import type { LinePosition, ScanResult, TornTail } from '../codec/scan';
import type { IndexUpkeep, Loaded } from '../codec/loaded';
import type { IndexQuery, NewestQuery, StoreSpec } from '../codec/store-spec';
import { bindingAt, cacheFileState, mtimeOf, noteInternal, readVerified } from './cache-file';
import { dropIndexFiles, indexName } from './index-base';
import { buildIndex } from './index-levels';
import { deltaName, dropDelta, dropSnapshot, snapshotCovers, snapshotName } from './snapshot';
import { keepSnapshot, loadSnapshot } from './snapshot-load';
import { buildName, dropBuild } from './snapshot-build';
import { DerivedDamage } from './sorted-table';
import { StoreIndex } from './store-index';
import { AppendUpkeep, indexCoversJournal, loadKeyRecords, loadNewest, loadPrefix, loadTally, loadThroughIndex, ReplayUpkeep } from './through-index';
import { openJournalFile } from '../../shared/journal-file';
import type { Rebuilt } from './rebuild';
import { rebuildIndex, streamSnapshot } from './rebuild-lost';

export { CACHE_DIR, takeUnusable } from './cache-file';

/** The derived files of one journal (`spec.file` in the data directory `root`). */
class DerivedFiles<S> {
  private readonly path: string;

  constructor(
    private readonly root: string,
    private readonly spec: StoreSpec<S>,
  ) {
    this.path = join(root, spec.file);
  }

  /** A state holding the entities `keys`, through the index; undefined when none verifies (replay instead). */
  findKeys(keys: readonly string[], opts: { keep?: boolean } = {}): Loaded<S> | undefined {
    return loadThroughIndex(this.path, this.root, this.spec, { keys }, opts.keep);
  }

  /**
   * Every line of the entity `key` in the journal, verified, through the index (a history read), and `gap` as
   * newest's; undefined when none verifies or the journal ends in a torn tail (the caller reads it whole).
   */
  keyRecords(key: string): { records: { record: JournalRecord; at: LinePosition }[]; gap: number } | undefined {
    const read = loadKeyRecords(this.path, this.root, this.spec, key);
    return read === undefined || read.tornTail !== undefined ? undefined : { records: read.records, gap: read.gap };
  }

  /** A state holding every entity that may match `query` (some that do not: filter exactly); undefined as findKeys. */
  candidates(query: IndexQuery, opts: { keep?: boolean } = {}): Loaded<S> | undefined {
    return loadThroughIndex(this.path, this.root, this.spec, { query }, opts.keep);
  }

  /**
   * The entities whose value of the ordered key `query.index` is at most `query.atMost`, highest first, read
   * until `enough(state)`, and how many the index holds in that range (unless `query.count` is false: then
   * only the pages of the entities read are read), and `gap`: journal bytes past what the index covers (its
   * prefix trusted unread); undefined as findKeys.
   */
  newest(query: NewestQuery, enough: (state: S) => boolean): { state: S; total: number | undefined; tornTail: TornTail | undefined; gap: number } | undefined {
    return loadNewest(this.path, this.root, this.spec, query, enough);
  }

  /**
   * The entities whose value of the prefixed key `query.index` starts with `query.prefix`, in the order of
   * their values, read until `enough(state)` (a matching entity left out sorts after those read), and the torn
   * tail it passed over (and `gap`, as newest's); undefined as findKeys.
   */
  prefix(query: { index: string; prefix: string }, enough: (state: S) => boolean): { state: S; tornTail: TornTail | undefined; gap: number } | undefined {
    return loadPrefix(this.path, this.root, this.spec, query, enough);
  }

  /**
   * The tally's counts (StoreSpec.tally) of the hours `from` to `to` (ms since the epoch / 3,600,000),
   * `counts[hour - from][series]`, and the torn tail and `gap` as newest's; undefined as findKeys.
   */
  tally(from: number, to: number): { counts: number[][]; tornTail: TornTail | undefined; gap: number } | undefined {
    return loadTally(this.path, this.root, this.spec, from, to);
  }

  /**
   * One verifying scan of the journal, folding the entities `keys`, that writes a whole new index in bounded
   * memory unless it finds damage (rebuild.ts), and the snapshot too if that was lost (rebuild-lost.ts).
   * undefined without a key index or a journal, or (`needIndex`) as soon as the index cannot be written.
   */
  rebuild(keys: readonly string[], needIndex: boolean): (Rebuilt<S> & { path: string }) | undefined {
    if (this.spec.keyOf === undefined) return undefined;
    return this.withJournal(undefined, (fd) => {
      const rebuilt = rebuildIndex(this.root, this.spec, fd, keys, needIndex);
      return rebuilt === undefined ? undefined : { ...rebuilt, path: this.path };
    });
  }

  /**
   * A whole new snapshot, built by streaming the journal in bounded memory (snapshot-stream.ts), and the index
   * too in the same scan if that was lost (rebuild-lost.ts): the scan, and whether the snapshot was installed.
   * undefined without a streamed codec, for a small journal (replay it), or when it could not be written.
   */
  streamSnapshot(writer: boolean): { scan: ScanResult; built: boolean } | undefined {
    if (this.spec.snapshot?.stream === undefined) return undefined;
    return this.withJournal(undefined, (fd) => streamSnapshot(this.root, this.spec, fd, writer));
  }

  /** `use` of the journal open for reading (closed after), or `none` when it cannot be opened. */
  private withJournal<T>(none: T, use: (fd: number) => T): T {
    let fd: number;
    try {
      fd = openJournalFile(this.path);
    } catch {
      return none;
    }
    try {
      return use(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The whole state from the snapshot and the records after it; undefined when there is none that verifies. With
   * `lazy`, its pages are read on demand until the state's release() (a read may throw DerivedDamage).
   */
  snapshot(opts: { lazy?: boolean } = {}): Loaded<S> | undefined {
    return loadSnapshot(this.root, this.path, this.spec, opts);
  }

  /** Removes the snapshot, its delta and a rewrite of it under way (a page of it did not verify). */
  dropSnapshot(): void {
    dropSnapshot(this.root, this.spec.file);
    dropDelta(this.root, this.spec.file);
    dropBuild(this.root, this.spec.file);
  }

  /**
   * Runs `use` over the state of the snapshot, its body read on demand while `use` runs (a retrieve reads only
   * its terms' postings). undefined when there is no snapshot that verifies, or when a page of it turns out
   * damaged meanwhile (the snapshot is dropped): then the caller answers from a replay. With the answer, the
   * torn tail the read passed over (the caller reports it).
   */
  async readWith<T>(use: (state: S) => T | Promise<T>): Promise<{ answer: T; tornTail: Loaded<S>['tornTail'] } | undefined> {
    const lazy = loadSnapshot(this.root, this.path, this.spec, { lazy: true });
    if (lazy === undefined) return undefined;
    try {
      const answer = await use(lazy.state);
      this.keep(lazy, { writer: false });
      return { answer, tornTail: lazy.tornTail };
    } catch (error) {
      if (!(error instanceof DerivedDamage)) throw error;
      dropSnapshot(this.root, this.spec.file);
      return undefined;
    } finally {
      lazy.release();
    }
  }

  /** The record at `at` of the journal open at `fd`, verified as a replay verifies it (undefined when it does not). */
  read(fd: number, at: LinePosition): JournalRecord | undefined {
    return readVerified(fd, at);
  }

  /**
   * Brings the derived files up to the state `loaded` holds. A writer (under the lock) appends to the index;
   * a reader (no lock) only writes whole files, temp + rename, after it had to replay: either way a file
   * describes exactly the journal prefix it names, so a race between them costs speed, never an answer.
   */
  keep(loaded: Loaded<S>, opts: { writer: boolean }): void {
    if (loaded.damaged) return;
    try {
      this.keepFiles(loaded, opts);
    } catch (error) {
      // Keeping a cache runs after a write's commit: whatever fails here is told, never the command's failure.
      noteInternal(this.root, 'keeping the derived files', error);
    }
  }

  private keepFiles(loaded: Loaded<S>, opts: { writer: boolean }): void {
    // Read before the files are derived: a write after this makes them stale (by size), never wrong.
    const mtime_ns = mtimeOf(this.path);
    const upkeep = loaded.index;
    if (upkeep instanceof AppendUpkeep && opts.writer) upkeep.index.persist(loaded.state, { ...loaded, live: upkeep.live });
    // A reader that replayed leaves an index that verifies and covers the journal as it is: building it again
    // anyway wrote a new base at every such read, and a store only read (a dashboard polling its list) gathered
    // them without end.
    else if (upkeep instanceof ReplayUpkeep && loaded.full && (opts.writer || !indexCoversJournal(this.path, this.root, this.spec))) {
      buildIndex(this.root, this.spec, loaded.state, upkeep.lines.entries, upkeep.lines.keys, bindingAt(loaded, mtime_ns), upkeep.live);
    }
    keepSnapshot(this.root, this.path, this.spec, loaded, mtime_ns, opts.writer);
  }

  /** Removes every derived file of the journal (after damage, or before a rewrite). */
  drop(): void {
    dropIndexFiles(this.root, this.spec.file);
    this.dropSnapshot();
  }

  /** Opens what derived files there are, so that any that cannot be used is noted (takeUnusable): for `journal check`. */
  probe(): void {
    if (this.spec.keyOf !== undefined) cacheFileState(this.root, indexName(this.spec.file));
    if (this.spec.snapshot !== undefined) {
      cacheFileState(this.root, snapshotName(this.spec.file));
      snapshotCovers(this.root, this.spec.file);
      if (this.spec.snapshot.delta !== undefined) cacheFileState(this.root, deltaName(this.spec.file));
      if (this.spec.snapshot.steps !== undefined) cacheFileState(this.root, buildName(this.spec.file));
    }
  }

  /** What `crux doctor` says of the index. */
  describeIndex(): 'valid' | 'stale' | 'absent' | 'unusable' {
    let fd: number;
    try {
      fd = openJournalFile(this.path);
    } catch {
      return 'absent';
    }
    try {
      const index = StoreIndex.open(this.root, this.spec, fd);
      if (index === undefined) {
        const state = cacheFileState(this.root, indexName(this.spec.file));
        return state === 'usable' ? 'stale' : state;
      }
      const gap = index.gap;
      index.close();
      return gap === 0 ? 'valid' : 'stale';
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** The upkeep a full replay feeds every record to, so that keep() can build a whole index from it. */
export const replayUpkeep = (spec: StoreSpec<any>): IndexUpkeep | undefined => (spec.keyOf === undefined ? undefined : new ReplayUpkeep(spec));

/** Whether `error` is damage found in a derived file read on demand (the caller answers from the journals instead). */
export const isDerivedDamage = (error: unknown): boolean => error instanceof DerivedDamage;

export const derivedFiles = <S>(root: string, spec: StoreSpec<S>): DerivedFiles<S> => new DerivedFiles(root, spec);
