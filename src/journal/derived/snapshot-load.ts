// Loading a store's whole state from its snapshot, its delta and the journal's records after them, and keeping
// them in step: the snapshot rewritten once SNAPSHOT_TAIL_BYTES of journal follow it, the delta by a reader
// that folded DELTA_AFTER_RECORDS records or more past both.
import { fs } from '../../shared/fs';
import { scanJournal, type ScanResult } from '../scan';
import { loadedAt, type Loaded } from '../loaded';
import type { SnapshotBody, StoreSpec } from '../store-spec';
import { mtimeOf } from './cache-file';
import { openSnapshot, readWhole, snapshotCovers, writeSnapshot, type OpenSnapshot } from './snapshot';
import { dropDelta, readDelta, writeDelta } from './snapshot-delta';
import type { JournalBinding } from './cache-file';
import { DerivedDamage } from './sorted-table';
import { bindingAt } from './index-tail';
import { openJournalFile } from '../journal-file';

/** A snapshot is rewritten once this many bytes of journal follow it (readers replay at most that much). */
const SNAPSHOT_TAIL_BYTES = 256 * 1024;
/**
 * A reader that folded this many records past the snapshot and its delta writes a new delta: the next reader
 * then applies them at once (a few arrays) rather than verifying, decoding and folding each again.
 */
const DELTA_AFTER_RECORDS = 16;

export const isDamaged = (scan: ScanResult) => scan.problems.some((p) => p.offset !== scan.tornTail?.offset);

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

/** Writes a new snapshot when there is none or SNAPSHOT_TAIL_BYTES of journal follow it. */
export function keepSnapshot<S>(root: string, path: string, spec: StoreSpec<S>, loaded: Loaded<S>, mtime_ns: string): void {
  const codec = spec.snapshot;
  if (codec === undefined) return;
  const end = bindingAt(loaded, mtime_ns);
  if (loaded.source !== 'replay') {
    const covers = loaded.snapshotAt ?? snapshotCovers(root, spec.file);
    if (covers !== undefined && covers <= end.size && end.size - covers < SNAPSHOT_TAIL_BYTES) {
      keepDelta(root, spec, loaded, end);
      return;
    }
  }
  let whole: Loaded<S> = loaded;
  let stamp = mtime_ns;
  if (!loaded.full) {
    stamp = mtimeOf(path);
    const from = loadSnapshot(root, path, spec) ?? replayState(path, spec);
    if (from === undefined) return;
    whole = from;
  }
  // The delta continued the snapshot being replaced: a new snapshot covers what it held.
  dropDelta(root, spec.file);
  writeSnapshot(root, spec.file, codec.version, bindingAt(whole, stamp), codec.encode(whole.state));
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
