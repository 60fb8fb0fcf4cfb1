// Loading a store's state: a full, verifying replay; or, through the derived layer (derived/), only the
// entities a command names, or a snapshot and the verified records after it.
import { isDamaged, scanJournal, type LinePosition, type ScanResult } from '../codec/scan';
import { derivedFiles, replayUpkeep } from '../derived';
import { loadedAt, type Loaded, type Reporter } from '../codec/loaded';
import { reportDamage } from '../codec/reporting';
import type { IndexQuery, StoreSpec } from '../codec/store-spec';

export type { Loaded, Reporter, WorkPhase } from '../codec/loaded';

export type OnRecord = (at: LinePosition) => void;

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
  if (!opts.quiet) reportProblems(path, spec, scan, reporter);
  return {
    ...loadedAt(state, 'replay', scan, isDamaged(scan)),
    scan,
    ...(upkeep === undefined ? {} : { index: upkeep }),
  };
}

/** Each problem a scan found, once, as `path:line: reason` (a torn tail aside: the next write quarantines it). */
function reportProblems(path: string, spec: StoreSpec<unknown>, scan: ScanResult, reporter: Reporter): void {
  for (const problem of scan.problems) {
    if (problem.offset === scan.tornTail?.offset) continue;
    reportDamage(
      reporter,
      { file: spec.file, line: problem.line, reason: problem.reason },
      `${path}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`,
    );
  }
}

/**
 * The entities `keys`, folded during one verifying scan that also writes a whole new index of the journal in
 * bounded memory (the first read after cache/ was lost: derived/rebuild.ts). The scan's problems are reported
 * as a replay reports them, unless quiet. With `needIndex`, undefined as soon as the index cannot be written
 * (the caller wanted only the index). Also undefined for a store without a key index.
 */
export function rebuildIndex<S>(
  root: string,
  spec: StoreSpec<S>,
  keys: readonly string[],
  reporter: Reporter,
  opts: { quiet?: boolean; needIndex?: boolean } = {},
): (Loaded<S> & { scan: ScanResult; built: boolean }) | undefined {
  const rebuilt = derivedFiles(root, spec).rebuild(keys, opts.needIndex === true);
  if (rebuilt === undefined) return undefined;
  const { scan, state, built } = rebuilt;
  if (!opts.quiet) reportProblems(rebuilt.path, spec, scan, reporter);
  return { ...loadedAt(state, 'keys', scan, isDamaged(scan)), full: false, scan, built };
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
  loaded.release?.();
}

/**
 * Loads the whole state from the store's snapshot and the journal's records after it (verified as a
 * replay verifies them); undefined when there is no snapshot that verifies (then the caller replays). With
 * `lazy`, the state reads the snapshot's pages as it needs them until releaseLoaded, and such a read may throw
 * DerivedDamage (see isDerivedDamage).
 */
export function loadSnapshot<S>(root: string, spec: StoreSpec<S>, opts: { lazy?: boolean } = {}): Loaded<S> | undefined {
  return derivedFiles(root, spec).snapshot(opts);
}
