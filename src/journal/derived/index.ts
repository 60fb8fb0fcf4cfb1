// The derived layer's interface to the journal core: after a load or a write, keep the store's derived files
// (index, snapshot) in step with the journal; drop them over damage. Everything derived lives in cache/ and
// is verified before it is trusted (see each file's header comment and crux-journal(5)).
import type { Loaded, Reporter } from '../load';
import { loadSnapshot, replayFull } from '../load';
import type { StoreSpec } from '../store-spec';
import { buildIndex, bindingAt, dropIndexFiles } from './store-index';
import { dropSnapshot, snapshotCovers, writeSnapshot } from './snapshot';
import { mtimeOf } from './cache-file';

export type { IndexQuery } from '../store-spec';
export { CACHE_DIR } from './cache-file';
export { describeIndex } from './store-index';

/** A snapshot is rewritten once this many bytes of journal follow it (readers replay at most that much). */
export const SNAPSHOT_TAIL_BYTES = 256 * 1024;

/**
 * Brings a store's derived files up to the state `loaded` holds. A writer (under the lock) appends to the
 * index; a reader (no lock) only writes whole files, temp + rename, after it had to replay: either way a
 * file describes exactly the journal prefix it names, so a race between them costs speed, never an answer.
 */
export function keepDerived<S>(root: string, path: string, spec: StoreSpec<S>, loaded: Loaded<S>, reporter: Reporter, opts: { writer: boolean }): void {
  if (loaded.damaged) return;
  // Read before the files are derived: a write after this makes them stale (by size), never wrong.
  const mtime_ns = mtimeOf(path);
  const index = loaded.index;
  if (index?.mode === 'append' && opts.writer) index.index.persist(loaded.state, { ...loaded, live: index.estimate.total });
  else if (index?.mode === 'rebuild' && loaded.full) buildIndex(root, spec, loaded.state, index.lines.entries, index.lines.keys, { ...loaded, live: index.estimate.total, mtime_ns });
  keepSnapshot(root, path, spec, loaded, reporter, mtime_ns);
}

function keepSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, loaded: Loaded<S>, reporter: Reporter, mtime_ns: string): void {
  const codec = spec.snapshot;
  if (codec === undefined) return;
  const end = bindingAt(loaded, mtime_ns);
  if (loaded.source !== 'replay') {
    const covers = loaded.snapshotAt ?? snapshotCovers(root, spec.file);
    if (covers !== undefined && covers <= end.size && end.size - covers < SNAPSHOT_TAIL_BYTES) return;
  }
  let whole: Loaded<S> = loaded;
  let stamp = mtime_ns;
  if (!loaded.full) {
    stamp = mtimeOf(path);
    whole = loadSnapshot(root, path, spec, reporter) ?? replayFull(path, spec, reporter, { quiet: true });
    if (whole.damaged) return;
  }
  writeSnapshot(root, spec.file, codec.version, bindingAt(whole, stamp), codec.encode(whole.state));
}

/** Removes every derived file of a journal (after damage, or before a rewrite). */
export function dropDerived(root: string, file: string): void {
  dropIndexFiles(root, file);
  dropSnapshot(root, file);
}
