// A data directory read the quick way, for `session get`'s own bundle (dist/fast-read.cjs): one entity through an
// index that verifies, and nothing else. Whatever else a read may meet — no index or one that does not verify, a line
// it names that does not verify, a torn tail, a derived file it cannot use, an index far behind the journal, or any
// other kind of read or write — it neither reports, repairs nor rebuilds: it hands the command line on (HandOn), and
// bin/crux runs it in the full program, which meets it as every read does (SPEC §3: warnings, rebuilds, replays).
// Nothing has been written or printed by then. So this bundle carries none of that code (the lock, the rebuild, the
// replay, the snapshots, the writes: ~40% of what a get read and initialised), and its answers are the full
// program's: the same index code (derived/through-index.ts) reads the entity, and every other way goes there.
import { join } from 'node:path';
import { fs } from '../shared/fs';
import type { JournalStore, KeyStore } from './store-boundary';
import type { IndexQuery, StoreSpec } from './store-spec';
import { lookThroughIndex } from './derived/through-index';
import { takeUnusable } from './derived/cache-file';

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

const NO_KEYS: KeyStore = {
  describe: () => handOn('keys'),
  read: () => handOn('keys'),
  create: () => handOn('keys'),
  stat: () => handOn('keys'),
  peek: () => handOn('keys'),
  list: () => handOn('keys'),
};

/** The data directory at `root`, read one entity at a time through its index; every other call hands on. */
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

  private look<S>(spec: StoreSpec<S>, what: { keys: readonly string[] } | { query: IndexQuery }): S {
    const path = join(this.location, spec.file);
    const loaded = lookThroughIndex(path, this.location, spec, what);
    // A derived file noted unusable on the way is told by the full program, which finds it again.
    const unusable = takeUnusable().length > 0;
    if (loaded !== undefined && loaded.tornTail === undefined && !unusable) return loaded.state;
    // No journal (nor, it may be, a directory) is an empty store, as a replay finds it; anything else goes on.
    if (loaded === undefined && !unusable && absent(path)) return spec.initial();
    return handOn('this read');
  }

  read = () => handOn('a whole read');
  readWith = () => handOn('a whole read');
  readTerms = () => handOn('a query');
  readAt = () => handOn('a read by position');
  readHistory = () => handOn('a read of history');
  write = () => handOn('a write');
  check = () => handOn('a check');
  compact = () => handOn('a compaction');
  survey = () => handOn('a survey');
  init = () => handOn('an init');
  rawLines = () => handOn('a copy');
  restore = () => handOn('a restore');
  readConsistent = () => handOn('a copy');
}
