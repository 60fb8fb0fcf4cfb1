// What the first call after a lost cache/ rebuilds: one verifying scan of the journal for every derived file that
// was lost, where a call that needed one built it alone and the next call that needed the other scanned the whole
// journal again (at 1M cases: a retrieve's snapshot, 5.6 s; then the first `case record`'s index, 3.7 s more).
//
// The part the caller asked for leads the scan (the index: rebuild.ts; the snapshot: snapshot-stream.ts); the
// other is taken along only when its own file is missing or no longer holds for the journal. The lead failing
// ends the scan (the caller replays instead, as before); the part taken along failing is given up alone, and the
// scan goes on. Each is written and installed as it would be alone, the snapshot first, then the index.
import { fs } from '../../shared/fs';
import type { JournalRecord } from '../codec/record';
import { scanJournal, type LinePosition, type ScanPart, type ScanResult } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import { bindingHolds, mtimeOf } from './cache-file';
import { openManifest } from './index-base';
import { IndexRebuild, type Rebuilt } from './rebuild';
import { openSnapshot } from './snapshot';
import { SnapshotRebuild, SnapshotUnbuilt } from './snapshot-stream';
import { SpillFailed } from './spill';

/**
 * Scans the journal open at `fd`, folding the entities `keys`, and writes a whole new index of it unless the scan
 * finds damage, and a new snapshot too when that was lost and the store streams one. With `needIndex`, undefined
 * as soon as the index cannot be written (the caller then replays instead: only the index was wanted).
 */
export function rebuildIndex<S>(root: string, spec: StoreSpec<S>, fd: number, keys: readonly string[], needIndex: boolean): Rebuilt<S> | undefined {
  const mtime_ns = mtimeOf(fd);
  const index = new IndexRebuild(root, spec, keys, needIndex);
  const snapshot = snapshotLost(root, spec, fd) ? along(() => SnapshotRebuild.start(root, spec as StoreSpec<unknown>, fd)) : undefined;
  const scanned = scanParts(fd, spec, index, snapshot);
  if (scanned === undefined) return undefined;
  const { scan } = scanned;
  if (scanned.along) along(() => snapshot?.finish(scan, mtime_ns, false));
  return { scan, state: index.state, built: index.finish(fd, scan, mtime_ns) };
}

/**
 * Scans the journal open at `fd` through the store's streamed snapshot build and installs the snapshot it writes
 * unless the scan finds damage, and a new index too when that was lost. undefined when the store has no streamed
 * build, the journal is below its size to stream, or the scan could not feed the build; else the scan, and whether
 * a new snapshot was installed.
 */
export function streamSnapshot<S>(root: string, spec: StoreSpec<S>, fd: number, writer: boolean): { scan: ScanResult; built: boolean } | undefined {
  const mtime_ns = mtimeOf(fd);
  let snapshot: SnapshotRebuild | undefined;
  try {
    snapshot = SnapshotRebuild.start(root, spec as StoreSpec<unknown>, fd);
  } catch (error) {
    if (error instanceof SnapshotUnbuilt) return undefined;
    throw error;
  }
  if (snapshot === undefined) return undefined;
  const index = spec.keyOf !== undefined && indexLost(root, spec, fd) ? new IndexRebuild(root, spec, [], false) : undefined;
  const scanned = scanParts(fd, spec, snapshot, index);
  if (scanned === undefined) return undefined;
  const { scan } = scanned;
  // A snapshot that could not be written leaves the index taken along to be installed all the same.
  const built = along(() => snapshot.finish(scan, mtime_ns, writer)) === true;
  if (scanned.along) index?.finish(fd, scan, mtime_ns);
  return { scan, built };
}

interface Scanned {
  readonly scan: ScanResult;
  /** Whether the part taken along went the whole scan (it was not given up). */
  readonly along: boolean;
}

/** Whether a part failed because it cannot be built here (a full disk, a spill read back wrong), not by a bug. */
const cannotBuild = (error: unknown) => error instanceof SnapshotUnbuilt || error instanceof SpillFailed;

/**
 * One verifying scan feeding `lead`, and `beside` while it does not fail: a part taken along that cannot be built
 * is closed and left out of the rest of the scan. `lead`'s failures end the scan and close both parts: undefined
 * when the lead cannot be built (the caller replays instead), else the error is thrown.
 */
function scanParts<A, B>(fd: number, spec: StoreSpec<unknown>, lead: Part<A>, beside: Part<B> | undefined): Scanned | undefined {
  try {
    return scanWith(fd, spec, lead as Part<unknown>, beside as Part<unknown> | undefined);
  } catch (error) {
    lead.close();
    beside?.close();
    if (cannotBuild(error)) return undefined;
    throw error;
  }
}

type Part<K> = ScanPart<K> & { close(): void };

/**
 * The scan holds, for each record of a batch not yet whole, what one part made of it (an import of 1M cases is one
 * batch: the `carried` part); the other part's items wait here by line, only those its take does not pass over (an
 * index rebuild takes the few records of the keys asked for; a part that takes nothing has none held). A batch that
 * never completed is never taken, so a take passes over the lines before its own.
 */
function scanWith(fd: number, spec: StoreSpec<unknown>, lead: Part<unknown>, beside: Part<unknown> | undefined): Scanned {
  let going = beside !== undefined;
  const guarded = <T>(run: () => T): T | undefined => {
    if (!going) return undefined;
    try {
      return run();
    } catch (error) {
      if (!cannotBuild(error)) throw error;
      going = false;
      beside!.close();
      return undefined;
    }
  };
  const other: ScanPart<unknown> = {
    keep: (record, at) => guarded(() => beside!.keep(record, at)),
    take: (item, at) => guarded(() => beside!.take(item, at)),
    takes: beside !== undefined && beside.takes !== false,
    idle: () => !going,
  };
  // The lead's items wait here when it takes nothing, or when it can tell those it takes (and the other part takes).
  const [carried, held] = lead.takes === false || (other.takes !== false && lead.idle !== undefined) ? [other, lead] : [lead, other];
  const idle = held.takes === false ? () => true : (held.idle?.bind(held) ?? (() => false));
  const lines: number[] = [];
  const items: unknown[] = [];
  let next = 0;
  const scan = scanJournal(
    fd,
    spec.vocabulary,
    (item: unknown, at: LinePosition) => {
      while (next < lines.length && lines[next]! < at.line) next++;
      if (lines[next] === at.line) {
        held.take(items[next], at);
        if (++next === lines.length) lines.length = items.length = next = 0;
      }
      carried.take(item, at);
    },
    undefined,
    {
      keep: (record: JournalRecord, at: LinePosition) => {
        const own = held.keep(record, at);
        if (!idle(own)) {
          items.push(own);
          lines.push(at.line);
        }
        return carried.keep(record, at);
      },
    },
  );
  return { scan, along: going };
}

/** `run`'s result, or undefined when the part taken along cannot be built (it is not the caller's failure). */
function along<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch (error) {
    if (cannotBuild(error)) return undefined;
    throw error;
  }
}

/** Whether the store streams a snapshot and has none that holds for the journal open at `fd`. */
function snapshotLost(root: string, spec: StoreSpec<unknown>, fd: number): boolean {
  const codec = spec.snapshot;
  if (codec?.stream === undefined) return false;
  const open = openSnapshot(root, spec.file, codec.version, fd, fs.fstatSync(fd).size);
  open?.close();
  return open === undefined;
}

/** Whether the store's index is missing or its base no longer holds for the journal open at `fd`. */
function indexLost(root: string, spec: StoreSpec<unknown>, fd: number): boolean {
  const manifest = openManifest(root, spec);
  return manifest === undefined || !bindingHolds(fd, fs.fstatSync(fd).size, manifest.binding, { prefix: true });
}
