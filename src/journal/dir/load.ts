// Loading a store's state by a full, verifying replay, or by the scan that rebuilds a lost index (derived/); the
// derived layer's own loads (entities by key, a snapshot and the records after it) are derivedFiles' (derived/).
import { isDamaged, scanJournal, type LinePosition, type ScanResult } from '../codec/scan';
import { derivedFiles, replayUpkeep } from '../derived';
import { loadedAt, type Loaded, type Reporter } from '../codec/loaded';
import { reportDamage } from '../codec/reporting';
import type { StoreSpec } from '../codec/store-spec';

export type { Loaded, Reporter, WorkPhase } from '../codec/loaded';

/** Replays the whole journal, verifying every line; reports each problem once unless quiet. */
export function replayFull<S>(
  path: string,
  spec: StoreSpec<S>,
  reporter: Reporter,
  opts: { quiet?: boolean; onRecord?: ((at: LinePosition) => void) | undefined } = {},
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
