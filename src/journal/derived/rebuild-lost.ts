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
 * The scan holds, for each record of a batch not yet whole, what the part that takes made of it (an import of 1M
 * cases is one batch); when both take, the other part's items that its take would not pass over wait here, by line.
 */
function scanParts<A, B>(fd: number, spec: StoreSpec<unknown>, lead: Part<A>, beside: Part<B> | undefined): Scanned | undefined {
  try {
    return scanWith(fd, spec, lead, beside);
  } catch (error) {
    lead.close();
    beside?.close();
    if (cannotBuild(error)) return undefined;
    throw error;
  }
}

type Part<K> = ScanPart<K> & { close(): void };

/** No item held for a line. */
const NOTHING = Symbol('nothing');

function scanWith<A, B>(fd: number, spec: StoreSpec<unknown>, lead: Part<A>, beside: Part<B> | undefined): Scanned {
  const scan = (keep: (record: JournalRecord, at: LinePosition) => unknown, take: (item: never, at: LinePosition) => void) =>
    scanJournal(fd, spec.vocabulary, take as (item: unknown, at: LinePosition) => void, undefined, { keep });
  if (beside === undefined)
    return {
      scan: scan(
        (record, at) => lead.keep(record, at),
        (item: A, at) => lead.take(item, at),
      ),
      along: false,
    };
  let going = true;
  const giveUp = (error: unknown) => {
    if (!cannotBuild(error)) throw error;
    going = false;
    beside.close();
  };
  const besideKeep = (record: JournalRecord, at: LinePosition): B | undefined => {
    if (!going) return undefined;
    try {
      return beside.keep(record, at);
    } catch (error) {
      giveUp(error);
      return undefined;
    }
  };
  const besideTake = (item: B, at: LinePosition) => {
    if (!going) return;
    try {
      beside.take(item, at);
    } catch (error) {
      giveUp(error);
    }
  };
  if (lead.takes === false) {
    const scanned = scan((record, at) => {
      lead.keep(record, at);
      return besideKeep(record, at);
    }, besideTake);
    return { scan: scanned, along: going };
  }
  if (beside.takes === false) {
    const scanned = scan(
      (record, at) => {
        besideKeep(record, at);
        return lead.keep(record, at);
      },
      (item: A, at) => lead.take(item, at),
    );
    return { scan: scanned, along: going };
  }
  // Both take: the scan carries one part's items, and the other's wait here by line (for the lead, only those its
  // take does not pass over: an index rebuild's lead takes the few records of the keys asked for, and a whole
  // 1M-case batch would otherwise hold a line and an item for each of its records). A batch that never completed is
  // never taken, so a take passes over the lines before its own.
  const lines: number[] = [];
  const held: unknown[] = [];
  let next = 0;
  const heldFor = (at: LinePosition): unknown => {
    while (next < lines.length && lines[next]! < at.line) next++;
    if (lines[next] !== at.line) return NOTHING;
    const item = held[next];
    if (++next === lines.length) lines.length = held.length = next = 0;
    return item;
  };
  const idle = lead.idle?.bind(lead);
  if (idle !== undefined) {
    const scanned = scan(
      (record, at) => {
        const item = besideKeep(record, at);
        const own = lead.keep(record, at);
        if (!idle(own)) {
          held.push(own);
          lines.push(at.line);
        }
        return item;
      },
      (item: B, at) => {
        const own = heldFor(at);
        if (own !== NOTHING) lead.take(own as A, at);
        besideTake(item, at);
      },
    );
    return { scan: scanned, along: going };
  }
  const scanned = scan(
    (record, at) => {
      const item = besideKeep(record, at);
      if (going) {
        held.push(item);
        lines.push(at.line);
      }
      return lead.keep(record, at);
    },
    (item: A, at) => {
      lead.take(item, at);
      const own = heldFor(at);
      if (going && own !== NOTHING) besideTake(own as B, at);
    },
  );
  return { scan: scanned, along: going };
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
