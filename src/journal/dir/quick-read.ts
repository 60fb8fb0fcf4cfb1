// A data directory read the quick way, for the get's and the list's own bundles (dist/fast-read.cjs,
// dist/fast-list.cjs): entities through an index that verifies, or a whole store without a snapshot by a replay
// that finds nothing to report over an index that covers it, and nothing else. Whatever else a read may meet — no
// index or one that does not verify, a line it names that does not verify, damage or a torn tail in a replay, a
// derived file it cannot use, an index far behind the journal, or any other kind of read or write — it neither
// reports, repairs nor rebuilds: it hands the command line on (HandOn), and bin/crux runs it in the full program,
// which meets it as every read does (SPEC §3: warnings, rebuilds, replays). Nothing has been written or printed by
// then. So these bundles carry none of that code (the lock, the rebuild, the snapshots, the writes: for a get ~50%
// of what it read and initialised), and their answers are the full program's: the same index and scan code reads
// the entities (derived/through-index.ts, scan.ts), and every other way goes there.
import { join } from 'node:path';
import { fs } from '../../shared/fs';
import type { JournalStore, KeyStore } from '../core/store-boundary';
import type { IndexQuery, NewestQuery, StoreSpec } from '../codec/store-spec';
import { indexCoversJournal, loadNewest, lookThroughIndex } from '../derived/through-index';
import { scanJournal, type ScanResult } from '../codec/scan';
import { takeUnusable } from '../derived/cache-file';

/** A read this store does not make: the command line goes to the full program, untouched. */
export class HandOn extends Error {
  constructor(readonly what: string) {
    super(`a quick read hands ${what} on to the full program`);
  }
}

const handOn = (what: string): never => {
  throw new HandOn(what);
};

/** Whether nothing is at `path`, nor at a directory above it (a lost file or a fresh store, never an unreadable one). */
function absent(path: string): boolean {
  try {
    return fs.lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

/**
 * A read's answer, when no derived file was found unusable on the way (the full program tells of it, finding it
 * again); with none, the empty store's where there is no journal (nor, it may be, a directory), as a replay finds
 * it. Anything else hands on.
 */
function settled<T>(path: string, answer: T | undefined, empty: () => T): T {
  if (takeUnusable().length > 0) return handOn('a read of an unusable derived file');
  if (answer !== undefined) return answer;
  return absent(path) ? empty() : handOn('a read without an index that verifies');
}

const NO_KEYS: KeyStore = {
  describe: () => handOn('keys'),
  read: () => handOn('keys'),
  create: () => handOn('keys'),
  stat: () => handOn('keys'),
  peek: () => handOn('keys'),
  list: () => handOn('keys'),
};

/**
 * The data directory at `location`, read through its index (entities by key, by a secondary key, newest first) or
 * by a replay that needs nothing written or told; every other call, and each of these where it would, hands on.
 */
export class QuickReadDir implements JournalStore {
  readonly keys = NO_KEYS;

  constructor(readonly location: string) {}

  async readKey<S>(spec: StoreSpec<S>, key: string): Promise<S> {
    return this.look(spec, { keys: [key] });
  }

  /** A get of a session not found under its agent asks which agents have it (domain/session/store.ts). */
  async readIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.look(spec, { query });
  }

  /** `session list --limit`, `--stranded --limit`: the newest entities of an ordered secondary key. */
  async readNewest<S>(spec: StoreSpec<S>, query: NewestQuery, enough: (state: S) => boolean): Promise<{ state: S; total: number | undefined }> {
    const path = join(this.location, spec.file);
    const read = loadNewest(path, this.location, spec, query, enough, 'look');
    // A torn tail is told by the full program (unless a writer is writing it: torn-tail.ts).
    if (read?.tornTail !== undefined) return handOn('a read past a torn tail');
    const { state, total } = settled(path, read, () => ({ state: spec.initial(), total: undefined, tornTail: undefined, gap: 0 }));
    return { state, total };
  }

  /**
   * A whole store without a snapshot (`session list`): a replay that found nothing to report, over a journal
   * whose index verifies and covers it all (else a reader would write one: DerivedFiles.keep).
   */
  async read<S>(spec: StoreSpec<S>): Promise<S> {
    if (spec.snapshot !== undefined) return handOn('a read of a snapshot');
    const path = join(this.location, spec.file);
    if (absent(path)) return spec.initial();
    const state = spec.initial();
    let scan: ScanResult;
    try {
      scan = scanJournal(path, spec.vocabulary, (record, at) => spec.evolve(state, record, at));
    } catch {
      return handOn('this read');
    }
    const covered = !scan.exists || spec.keyOf === undefined || indexCoversJournal(path, this.location, spec);
    const unusable = takeUnusable().length > 0;
    if (scan.problems.length > 0 || scan.tornTail !== undefined || !covered || unusable) return handOn('this read');
    return state;
  }

  private look<S>(spec: StoreSpec<S>, what: { keys: readonly string[] } | { query: IndexQuery }): S {
    const path = join(this.location, spec.file);
    const loaded = lookThroughIndex(path, this.location, spec, what);
    // A torn tail is told by the full program (unless a writer is writing it: torn-tail.ts).
    if (loaded?.tornTail !== undefined) return handOn('a read past a torn tail');
    return settled(path, loaded?.state, () => spec.initial());
  }

  readWith = () => handOn('a whole read');
  readTerms = () => handOn('a query');
  readAt = () => handOn('a read by position');
  readHistory = () => handOn('a read of history');
  write = () => handOn('a write');
  check = () => handOn('a check');
  compact = () => handOn('a compaction');
  rewrite = () => handOn('a rewrite');
  survey = () => handOn('a survey');
  init = () => handOn('an init');
  rawLines = () => handOn('a copy');
  restore = () => handOn('a restore');
  readConsistent = () => handOn('a copy');
}
