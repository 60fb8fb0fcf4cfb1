// Loading a store's state: a full, verifying replay; or, through the derived layer (derived/), only the
// entities a command names, or a snapshot and the verified records after it.
import { fs } from '../shared/fs';
import { scanJournal, type LinePosition, type ScanResult } from './scan';
import type { ChainHead } from './record';
import { KeyLines, StoreIndex } from './derived/store-index';
import { openSnapshot, readWhole, type OpenSnapshot } from './derived/snapshot';
import { DerivedDamage } from './derived/sorted-table';
import { LiveEstimate } from './derived/live-estimate';
import type { IndexQuery, SnapshotBody, StoreSpec } from './store-spec';

export interface Reporter {
  warn(message: string): void;
  /** A damaged line a replay passed over, as data (--json documents carry it as a warning). */
  damage?(file: string, line: number, reason: string): void;
  /** How far long work inside a write has come (encoding, applying, writing a batch): for a progress line. */
  progress?(phase: WorkPhase, done: number, total: number): void;
}

export type WorkPhase = 'encoding' | 'applying' | 'writing';

/** A store's state as a transaction holds it, with what appending and re-indexing need. */
export interface Loaded<S> {
  state: S;
  /** True when the state holds every entity; false when only the keys asked for. */
  full: boolean;
  /** How it was loaded: a verifying replay, an entity's lines, or a snapshot and the records after it. */
  source: 'replay' | 'keys' | 'snapshot';
  head: ChainHead;
  /** Where the head record's line is (for the bindings of derived files). */
  headAt?: LinePosition | undefined;
  bytes: number;
  lines: number;
  records: number;
  tornTail: ScanResult['tornTail'];
  /** Lines that failed verification (a torn tail aside): caches are not written over a damaged journal. */
  damaged: boolean;
  scan?: ScanResult;
  /** The size of journal the snapshot this state was decoded from covers (snapshot loads). */
  snapshotAt?: number;
  /** How the store's index is kept after writes: appended to, or built from this replay's key lines. */
  index?: { mode: 'append'; index: StoreIndex<S>; estimate: LiveEstimate } | { mode: 'rebuild'; lines: KeyLines; estimate: LiveEstimate };
}

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
  const lines = spec.keyOf === undefined ? undefined : new KeyLines(spec);
  const estimate = new LiveEstimate();
  const scan = scanJournal(path, spec.vocabulary, (record, at) => {
    spec.evolve(state, record, at);
    const key = lines?.add(record, at);
    if (key !== undefined) estimate.add(key, at.length);
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
    state,
    full: true,
    source: 'replay',
    damaged: isDamaged(scan),
    head: scan.head,
    headAt: scan.headAt,
    bytes: scan.bytes,
    lines: scan.lines,
    records: scan.records,
    tornTail: scan.tornTail,
    scan,
    ...(lines === undefined ? {} : { index: { mode: 'rebuild' as const, lines, estimate } }),
  };
}

function openJournal(path: string): number | undefined | 'absent' {
  try {
    return fs.openSync(path, 'r');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : undefined;
  }
}

/**
 * A state holding the entities `keys` (or every entity that may match `query`), read through the store's
 * index; undefined when there is no index that verifies (then the caller replays in full, and rebuilds it).
 * With `keep`, the index stays open in the result for the writer that appends after it (close it with
 * releaseLoaded); without, it is closed here.
 */
export function loadThroughIndex<S>(path: string, root: string, spec: StoreSpec<S>, what: { keys: readonly string[] } | { query: IndexQuery }, keep = false): Loaded<S> | undefined {
  if (spec.keyOf === undefined) return undefined;
  const fd = openJournal(path);
  if (fd === 'absent') {
    // No journal: an empty store (there is nothing to index yet).
    return undefined;
  }
  if (fd === undefined) return undefined;
  let index: StoreIndex<S> | undefined;
  try {
    index = StoreIndex.open(root, spec, fd);
    if (index === undefined) return undefined;
    const state = spec.initial();
    const ok = 'keys' in what ? index.loadKeys(state, what.keys) : index.loadCandidates(state, what.query);
    if (!ok) {
      // A line the index names does not verify: the index or the journal is damaged. A replay tells which.
      index.drop();
      return undefined;
    }
    const position = index.position();
    const estimate = new LiveEstimate(index.live);
    if ('keys' in what) for (const key of what.keys) estimate.seed(key, index.linesOf(key));
    const loaded: Loaded<S> = {
      state,
      full: false,
      source: 'keys',
      damaged: false,
      ...position,
      records: position.lines,
      ...(keep ? { index: { mode: 'append' as const, index, estimate } } : {}),
    };
    if (!keep) {
      // A reader that read far past the index writes a new base, so the next reader does not.
      index.refreshIfBehind();
    }
    return loaded;
  } finally {
    if (!keep || index === undefined) {
      index?.close();
      fs.closeSync(fd);
    }
  }
}

/** Closes what a load kept open (an index for a writer). */
export function releaseLoaded(loaded: Loaded<unknown>): void {
  if (loaded.index?.mode === 'append') loaded.index.index.close();
}

/**
 * Loads the whole state from the store's snapshot and the journal's records after it (verified as a
 * replay verifies them); undefined when there is no snapshot that verifies (then the caller replays).
 * Eager (the default): the whole body is read and verified now. With `lazy`, the state reads the body on
 * demand while `release()` has not been called; such a read may throw DerivedDamage (see readWith).
 */
export function loadSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, reporter: Reporter, opts: { lazy?: boolean } = {}): (Loaded<S> & { release(): void }) | undefined {
  const codec = spec.snapshot;
  if (codec === undefined) return undefined;
  const fd = openJournal(path);
  if (typeof fd !== 'number') return undefined;
  let snap: OpenSnapshot | undefined;
  let kept = false;
  try {
    const size = fs.fstatSync(fd).size;
    snap = openSnapshot(root, spec.file, codec.version, fd, size);
    if (snap === undefined) return undefined;
    const body = opts.lazy ? snap.body : inMemory(readWhole(snap.body));
    const state = codec.decode(body);
    if (state === undefined) return undefined;
    const b = snap.binding;
    const headAt = b.seq === 0 ? undefined : { line: b.lines, offset: b.head_offset, length: b.head_length };
    const open = snap;
    const release = opts.lazy ? () => open.close() : () => {};
    if (size === b.size) {
      kept = opts.lazy === true;
      return { state, full: true, source: 'snapshot', damaged: false, head: { seq: b.seq, h: b.h }, headAt, bytes: b.size, lines: b.lines, records: b.lines, tornTail: undefined, snapshotAt: b.size, release };
    }
    const scan = scanJournal(fd, spec.vocabulary, (record, at) => spec.evolve(state, record, at), b.seq === 0 ? undefined : { offset: b.size, line: b.lines, head: { seq: b.seq, h: b.h } });
    // Damage past the snapshot: a replay reports it exactly as it always does.
    if (isDamaged(scan)) return undefined;
    void reporter;
    kept = opts.lazy === true;
    return {
      state,
      full: true,
      source: 'snapshot',
      damaged: false,
      head: scan.head,
      headAt: scan.headAt ?? headAt,
      bytes: scan.bytes,
      lines: scan.lines,
      records: scan.lines,
      tornTail: scan.tornTail,
      snapshotAt: b.size,
      release,
    };
  } catch (error) {
    // A page of the snapshot that does not verify (read while folding the records after it): replay.
    if (error instanceof DerivedDamage) return undefined;
    throw error;
  } finally {
    if (!kept) snap?.close();
    fs.closeSync(fd);
  }
}

const inMemory = (bytes: Buffer): SnapshotBody => ({ length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) });

/** The record at `at`, verified as a replay verifies it (undefined when it does not). */
export { readVerified as readRecordAt } from './derived/cache-file';
