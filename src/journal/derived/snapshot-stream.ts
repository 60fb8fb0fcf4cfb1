// A store's snapshot built by streaming its journal (SnapshotCodec.stream), for the first read after cache/ was
// lost: one verifying scan hands each record to the codec's build, which spills what it keeps to scratch files
// (scratch.ts), then the build writes the new body straight into the snapshot's temp file. Its page table is
// computed from the body read back once it is all written, and the file is renamed into place as writeSnapshot's
// is. Memory follows the build's buffers, not the journal, where a replay held the whole state and then its
// encoding.
//
// Only journals of STREAM_AFTER_BYTES and more are streamed: below, a replay in memory is small and faster.
// Damage (any problem but a torn tail) builds nothing, as a replay would keep nothing: the caller replays and
// reports it. A scratch file or the snapshot that cannot be written (a full disk) builds nothing either.
import { fs } from '../../shared/fs';
import type { JournalRecord } from '../codec/record';
import { isDamaged, type LinePosition, type ScanPart, type ScanResult } from '../codec/scan';
import type { SnapshotCodec, SnapshotStream, StoreSpec } from '../codec/store-spec';
import { bindingAt, dropCacheFile, newNonce, oldCacheFiles, noteInternal, writeCacheFileBy, writeFully, type JournalBinding } from './cache-file';
import { dropDelta, pageTable, snapshotHeader, snapshotLayout, snapshotName, SNAPSHOT_PAGE } from './snapshot';
import { dropBuild } from './snapshot-build';
import { DerivedDamage } from './sorted-table';
import { ScratchSpace, SpillFailed } from './spill';
import { testHook } from '../../shared/test-hooks';

/** Journals smaller than this are replayed in memory instead (~25k cases); CRUX_TEST_STREAM_BYTES sets it in tests. */
const STREAM_AFTER_BYTES = 16 * 1024 * 1024;
const streamAfter = () => {
  const set = testHook('CRUX_TEST_STREAM_BYTES');
  return set === undefined || set === '' ? STREAM_AFTER_BYTES : Number(set);
};

const streams = (codec: SnapshotCodec<unknown>, size: number) => codec.stream !== undefined && size > 0 && size >= streamAfter();

/** Whether a lost snapshot of the journal at `path` is built by streaming (a large journal, a codec that can). */
export function streamsAt(spec: StoreSpec<unknown>, path: string): boolean {
  if (spec.snapshot === undefined) return false;
  try {
    return streams(spec.snapshot, fs.statSync(path).size);
  } catch {
    return false;
  }
}

/**
 * The snapshot's part of a verifying scan (ScanPart): the records go through the codec's streamed build, and
 * `finish` installs the snapshot it writes unless the scan found damage. undefined (from `start`) when the store
 * has no streamed build or the journal is below STREAM_AFTER_BYTES. A build that cannot be written (a full disk,
 * a scratch read back wrong) throws SnapshotUnbuilt out of keep, take or finish: nothing is installed.
 */
export class SnapshotRebuild implements ScanPart<number> {
  private constructor(
    private readonly root: string,
    private readonly spec: StoreSpec<unknown>,
    private readonly scratch: ScratchSpace,
    private readonly build: SnapshotStream,
  ) {}

  static start(root: string, spec: StoreSpec<unknown>, fd: number): SnapshotRebuild | undefined {
    const codec = spec.snapshot;
    if (codec?.stream === undefined) return undefined;
    let size: number;
    try {
      size = fs.fstatSync(fd).size;
    } catch {
      return undefined;
    }
    if (!streams(codec, size)) return undefined;
    sweepStaleTemps(root, spec.file);
    const scratch = new ScratchSpace(root, spec.file);
    try {
      return new SnapshotRebuild(
        root,
        spec,
        scratch,
        unbuiltOn(root, spec, () => codec.stream!(scratch)),
      );
    } catch (error) {
      scratch.close();
      throw error;
    }
  }

  // Called for every record: a try here, not a closure per call.
  keep(record: JournalRecord, at: LinePosition): number {
    try {
      return this.build.keep(record, at);
    } catch (error) {
      throw unbuilt(this.root, this.spec, error);
    }
  }

  take(kept: number): void {
    try {
      this.build.take(kept);
    } catch (error) {
      throw unbuilt(this.root, this.spec, error);
    }
  }

  /** After the scan: writes and installs the snapshot (not over damage). Whether it was installed. */
  finish(scan: ScanResult, mtime_ns: string, writer: boolean): boolean {
    const { root, spec } = this;
    try {
      if (isDamaged(scan)) return false;
      const body = unbuiltOn(root, spec, () => this.build.finish());
      const built = unbuiltOn(root, spec, () =>
        writeStreamed(root, spec.file, spec.snapshot!.version, bindingAt({ ...scan, tornTail: scan.tornTail }, mtime_ns), body),
      );
      if (built) {
        // As keepSnapshot: the delta continued the snapshot replaced; a reader leaves a build under way to its writer.
        dropDelta(root, spec.file);
        if (writer) dropBuild(root, spec.file);
      }
      return built;
    } finally {
      this.close();
    }
  }

  close(): void {
    this.scratch.close();
  }
}

/** A streamed snapshot that could not be built (its spills, or a bug the codec's bounds caught, noted): nothing is installed. */
export class SnapshotUnbuilt extends Error {}

function unbuiltOn<T>(root: string, spec: StoreSpec<unknown>, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw unbuilt(root, spec, error);
  }
}

/** What a failure of the build throws: SnapshotUnbuilt for one that leaves no snapshot (a bug the bounds caught noted), anything else as it is. */
function unbuilt(root: string, spec: StoreSpec<unknown>, error: unknown): unknown {
  if (error instanceof SpillFailed || error instanceof DerivedDamage) return new SnapshotUnbuilt(String(error));
  if (error instanceof RangeError) {
    noteInternal(root, `${spec.file}: a streamed snapshot`, error);
    return new SnapshotUnbuilt(String(error));
  }
  return error;
}

/** A temp file of a snapshot not touched for this long was left by a process that died (a build writes it throughout). */
const STALE_TEMP_MS = 10 * 60_000;

/** Removes the temp files of snapshots that a killed process left (as large as the snapshot: 150 MB at 1M cases). */
function sweepStaleTemps(root: string, file: string): void {
  for (const name of oldCacheFiles(root, `${snapshotName(file)}.`, /^\d+\.\d+\.tmp$/, STALE_TEMP_MS)) dropCacheFile(root, name);
}

/** Writes the streamed body as a snapshot (its page table from the body read back); false when it could not. */
function writeStreamed(
  root: string,
  file: string,
  codec: number,
  binding: JournalBinding,
  body: { readonly length: number; write(put: (bytes: Uint8Array, at: number) => void): void },
): boolean {
  const layout = snapshotLayout(body.length);
  return writeCacheFileBy(root, snapshotName(file), (fd) => {
    fs.ftruncateSync(fd, layout.bodyAt + body.length);
    body.write((bytes, at) => {
      if (!(at >= 0 && at + bytes.length <= body.length)) throw new RangeError('a streamed body wrote past its length');
      writeFully(fd, bytes, layout.bodyAt + at);
    });
    const nonce = newNonce();
    const run = Buffer.allocUnsafe(256 * SNAPSHOT_PAGE);
    let runAt = -1;
    const { table, dir } = pageTable(nonce, body.length, (p) => {
      const at = p * SNAPSHOT_PAGE;
      if (runAt < 0 || at >= runAt + run.length) {
        runAt = at;
        const want = Math.min(run.length, body.length - at);
        if (fs.readSync(fd, run, 0, want, layout.bodyAt + at) !== want) throw Object.assign(new Error('a streamed snapshot read back short'), { code: 'EIO' });
      }
      return run.subarray(at - runAt, Math.min(at - runAt + SNAPSHOT_PAGE, body.length - runAt));
    });
    writeFully(fd, snapshotHeader(file, codec, nonce, binding, body.length, dir), 0);
    writeFully(fd, dir, layout.dirAt);
    writeFully(fd, table, layout.tableAt);
  });
}
