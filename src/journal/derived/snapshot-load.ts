// Loading a store's whole state from its snapshot, its delta and the journal's records after them, and keeping
// them in step: the snapshot rewritten once enough journal follows it (tailAllowed), in steps by the writes that
// follow where the codec can (snapshot-build.ts), the delta by a reader that folded DELTA_AFTER_RECORDS records
// or more past both.
import { fs } from '../../shared/fs';
import { isDamaged, scanJournal } from '../codec/scan';
import { streamsAt } from './snapshot-stream';
import { loadedAt, type Loaded } from '../codec/loaded';
import type { SnapshotBody, StoreSpec } from '../codec/store-spec';
import { bindingAt, mtimeOf, type JournalBinding } from './cache-file';
import { dropDelta, openSnapshot, readDelta, readWhole, snapshotFacts, writeDelta, writeSnapshot, type OpenSnapshot } from './snapshot';
import { buildUnderWay, dropBuild, startBuild, stepBuild } from './snapshot-build';
import { DerivedDamage } from './sorted-table';
import { openJournalFile } from '../../shared/journal-file';
import { testHook } from '../../shared/test-hooks';

/** A snapshot is rewritten once this many bytes of journal follow it (readers replay at most that much). */
const SNAPSHOT_TAIL_BYTES = 256 * 1024;
/** ... or this share of the snapshot's body, when that is more (at 1M cases: ~2.3 MB of journal). */
const SNAPSHOT_TAIL_SHARE = 1 / 64;
/**
 * A reader that folded this many records past the snapshot and its delta writes a new delta: the next reader
 * then applies them at once (a few arrays) rather than verifying, decoding and folding each again.
 */
const DELTA_AFTER_RECORDS = 16;

/**
 * Loads the whole state from the store's snapshot and the journal's records after it (verified as a
 * replay verifies them); undefined when there is no snapshot that verifies (then the caller replays).
 * Eager (the default): the whole body is read and verified now. With `lazy`, the state reads the body on
 * demand while `release()` has not been called; such a read may throw DerivedDamage (the caller catches it).
 */
export function loadSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, opts: { lazy?: boolean } = {}): (Loaded<S> & { release(): void }) | undefined {
  const codec = spec.snapshot;
  if (codec === undefined) return undefined;
  let fd: number;
  try {
    fd = openJournalFile(path);
  } catch {
    return undefined;
  }
  let snap: OpenSnapshot | undefined;
  let kept = false;
  try {
    const size = fs.fstatSync(fd).size;
    snap = openSnapshot(root, spec.file, codec.version, fd, size);
    if (snap === undefined) return undefined;
    const body = opts.lazy ? snap.body : inMemory(readWhole(snap.body));
    const state = codec.decode(body);
    if (state === undefined) return undefined;
    const b = continueDelta(root, spec, state, snap, fd, size) ?? snap.binding;
    const headAt = b.seq === 0 ? undefined : { line: b.lines, offset: b.head_offset, length: b.head_length };
    const open = snap;
    const release = opts.lazy ? () => open.close() : () => {};
    const from = { snapshotAt: snap.binding.size, snapshotNonce: snap.nonce, release };
    if (size === b.size) {
      kept = opts.lazy === true;
      const at = { head: { seq: b.seq, h: b.h }, headAt, bytes: b.size, lines: b.lines, records: b.lines, tornTail: undefined };
      return { ...loadedAt(state, 'snapshot', at), ...from, foldedPast: 0 };
    }
    const scan = scanJournal(
      fd,
      spec.vocabulary,
      (record, at) => spec.evolve(state, record, at),
      b.seq === 0 ? undefined : { offset: b.size, line: b.lines, head: { seq: b.seq, h: b.h } },
    );
    // Damage past the snapshot: a replay reports it exactly as it always does.
    if (isDamaged(scan)) return undefined;
    kept = opts.lazy === true;
    return { ...loadedAt(state, 'snapshot', { ...scan, headAt: scan.headAt ?? headAt, records: scan.lines }), ...from, foldedPast: scan.lines - b.lines };
  } catch (error) {
    // A page of the snapshot that does not verify (read while folding the records after it): replay.
    if (error instanceof DerivedDamage) return undefined;
    throw error;
  } finally {
    if (!kept) snap?.close();
    fs.closeSync(fd);
  }
}

/**
 * Continues `state`, just decoded from `snap`, with the snapshot's delta when one continues that snapshot and
 * holds for the journal: the binding it reaches, or undefined (then the records are folded from the snapshot's).
 */
function continueDelta<S>(root: string, spec: StoreSpec<S>, state: S, snap: OpenSnapshot, fd: number, size: number): JournalBinding | undefined {
  const codec = spec.snapshot!;
  if (codec.delta === undefined) return undefined;
  const delta = readDelta(root, spec.file, codec.version, snap.nonce, fd, size);
  if (delta === undefined || delta.binding.size < snap.binding.size || delta.binding.seq < snap.binding.seq) return undefined;
  return codec.delta.apply(state, delta.body) ? delta.binding : undefined;
}

const inMemory = (bytes: Buffer): SnapshotBody => ({ length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) });

/**
 * Keeps the snapshot in step after a load. Over a snapshot that verifies: the delta (keepDelta), and, for a writer,
 * the rewrite in steps (snapshot-build.ts) once the journal past the snapshot is due one, one step a write. A
 * whole new snapshot where there is none (or the codec cannot write one in steps and one is due).
 */
export function keepSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, loaded: Loaded<S>, mtime_ns: string, writer: boolean): void {
  const codec = spec.snapshot;
  if (codec === undefined) return;
  const end = bindingAt(loaded, mtime_ns);
  if (loaded.source !== 'replay') {
    const facts = snapshotFacts(root, spec.file);
    const covers = loaded.snapshotAt ?? facts?.covers;
    if (covers !== undefined && covers <= end.size) {
      const due = end.size - covers >= tailAllowed(facts?.bodyBytes ?? 0);
      if (codec.steps !== undefined && codec.delta !== undefined) {
        // A build that installs a new snapshot drops the delta: the new one covers what it held.
        if (writer && keepBuilding(root, path, spec, loaded, end, due)) return;
        keepDelta(root, spec, loaded, end);
        return;
      }
      if (!due) {
        keepDelta(root, spec, loaded, end);
        return;
      }
    }
  }
  let whole: Loaded<S> = loaded;
  let stamp = mtime_ns;
  if (!loaded.full) {
    stamp = mtimeOf(path);
    // No snapshot, and a journal large enough to stream: the next whole read builds it (snapshot-stream.ts) in
    // bounded memory, where a replay here would hold the whole state (2.2 GiB at 1M cases) in a write that needed one key.
    const from = loadSnapshot(root, path, spec) ?? (streamsAt(spec, path) ? undefined : replayState(path, spec));
    if (from === undefined) return;
    whole = from;
  }
  // The delta continued the snapshot being replaced, and a build under way was rewriting it: a new snapshot covers
  // both. A reader (no lock) leaves the build to the writer taking its steps: it finds its snapshot replaced, and drops it.
  dropDelta(root, spec.file);
  if (writer) dropBuild(root, spec.file);
  writeSnapshot(root, spec.file, codec.version, bindingAt(whole, stamp), codec.encode(whole.state));
}

/**
 * How much journal may follow a snapshot before it is rewritten: SNAPSHOT_TAIL_BYTES, or a share of its body's
 * size (a rewrite writes the whole body: this keeps the bytes it writes per byte of journal bounded as it grows,
 * and the delta readers apply small beside the snapshot).
 */
const tailAllowed = (bodyBytes: number) => Math.max(Number(testHook('CRUX_TEST_SNAPSHOT_TAIL_BYTES')) || SNAPSHOT_TAIL_BYTES, bodyBytes * SNAPSHOT_TAIL_SHARE);

/**
 * A writer's part in the rewrite in steps: the next step of the build under way, else (`due`) a new build of the
 * state `loaded` holds (or, loaded by key, the whole state loaded now), started with its first step. True when a
 * step installed a new snapshot.
 */
function keepBuilding<S>(root: string, path: string, spec: StoreSpec<S>, loaded: Loaded<S>, end: JournalBinding, due: boolean): boolean {
  if (buildUnderWay(root, spec.file)) return stepBuild(root, path, spec as StoreSpec<unknown>);
  if (!due) return false;
  const whole = loaded.source === 'snapshot' && loaded.full && loaded.snapshotNonce !== undefined ? undefined : loadSnapshot(root, path, spec, { lazy: true });
  try {
    const from = whole ?? loaded;
    if (from.snapshotNonce === undefined) return false;
    const frozen = spec.snapshot!.delta!.encode(from.state);
    if (frozen === undefined) return false;
    return startBuild(root, path, spec as StoreSpec<unknown>, from.snapshotNonce, whole === undefined ? end : bindingAt(whole, mtimeOf(path)), frozen);
  } finally {
    whole?.release();
  }
}

/** Writes the delta of a state loaded from a snapshot once DELTA_AFTER_RECORDS records were folded past it. */
function keepDelta<S>(root: string, spec: StoreSpec<S>, loaded: Loaded<S>, end: JournalBinding): void {
  const codec = spec.snapshot!;
  if (codec.delta === undefined || loaded.source !== 'snapshot' || loaded.snapshotNonce === undefined) return;
  if ((loaded.foldedPast ?? 0) < DELTA_AFTER_RECORDS) return;
  const body = codec.delta.encode(loaded.state);
  if (body !== undefined) writeDelta(root, spec.file, codec.version, loaded.snapshotNonce, end, body);
}

/** The whole state by a quiet replay (its damage is reported by the replays that answer); undefined over damage. */
function replayState<S>(path: string, spec: StoreSpec<S>): Loaded<S> | undefined {
  const state = spec.initial();
  const scan = scanJournal(path, spec.vocabulary, (record, at) => spec.evolve(state, record, at));
  if (isDamaged(scan)) return undefined;
  return loadedAt(state, 'replay', scan);
}
