// Loading a store's state: a full, verifying replay; or, through the derived layer (derived/), only the
// entities a command names, or a snapshot and the verified records after it.
import { scanJournal, type LinePosition, type ScanResult } from './scan';
import { derivedFiles, replayUpkeep } from './derived';
import { loadedAt, type Loaded, type Reporter } from './loaded';
import type { IndexQuery, StoreSpec } from './store-spec';

export type { Loaded, Reporter, WorkPhase } from './loaded';

export type OnRecord = (at: LinePosition) => void;

const isDamaged = (scan: ScanResult) => scan.problems.some((p) => p.offset !== scan.tornTail?.offset);

/** Replays the whole journal, verifying every line; reports each problem once unless quiet. */
export function replayFull<S>(
  path: string,
  spec: StoreSpec<S>,
  reporter: Reporter,
  opts: { quiet?: boolean; onRecord?: OnRecord | undefined } = {},
): Loaded<S> & { scan: ScanResult } {
  const state = spec.initial();
  const upkeep = replayUpkeep(spec);
  const scan = scanJournal(path, spec.vocabulary, (record, at) => {
    spec.evolve(state, record, at);
    upkeep?.appended(record, at);
    opts.onRecord?.(at);
  });
  if (!opts.quiet) {
    for (const problem of scan.problems) {
      // A torn tail is the last write of a killed process: the next write quarantines it.
      if (problem.offset === scan.tornTail?.offset) continue;
      reporter.warn(`${path}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`);
      reporter.damage?.(spec.file, problem.line, problem.reason);
    }
  }
  return {
    ...loadedAt(state, 'replay', scan, isDamaged(scan)),
    scan,
    ...(upkeep === undefined ? {} : { index: upkeep }),
  };
}

/**
 * A state holding the entities `keys` (or every entity that may match `query`), read through the store's
 * index; undefined when there is no index that verifies (then the caller replays in full, and rebuilds it).
 * With `keep`, the index stays open in the result for the writer that appends after it (close it with
 * releaseLoaded); without, it is closed here.
 */
export function loadThroughIndex<S>(
  root: string,
  spec: StoreSpec<S>,
  what: { keys: readonly string[] } | { query: IndexQuery },
  keep = false,
): Loaded<S> | undefined {
  const derived = derivedFiles(root, spec);
  return 'keys' in what ? derived.findKeys(what.keys, { keep }) : derived.candidates(what.query, { keep });
}

/** Closes what a load kept open (an index for a writer). */
export function releaseLoaded(loaded: Loaded<unknown>): void {
  loaded.index?.release();
}

/**
 * Loads the whole state from the store's snapshot and the journal's records after it (verified as a
 * replay verifies them); undefined when there is no snapshot that verifies (then the caller replays).
 */
export function loadSnapshot<S>(root: string, spec: StoreSpec<S>): Loaded<S> | undefined {
  return derivedFiles(root, spec).snapshot();
}
