// Over 300 lines: the stepped rewrite and its build file, which nothing else reads or writes.
// Rewriting a store's snapshot in bounded steps (SnapshotCodec.steps), so that no single write pays for a whole
// rewrite (at 1M cases ~150 MB, 5 s and 900 MB in one call). A writer that finds enough journal past the snapshot
// freezes the state's changes since it (the codec's delta encoding) into cache/<journal>.state-build; each write
// after it, under the lock, decodes the same state again (the snapshot, on demand, and those frozen changes) and
// writes the next piece of the new snapshot's body (STEP_BYTES read and written) into cache/<journal>.state-next,
// with the checksums of the pages it completed. The last step writes the page table's directory and the header,
// and renames the new snapshot over the old one. Readers meanwhile use the old snapshot and its delta, as before.
//
// The build file (below) holds the frozen changes, the codec's cursor and the checksums
// so far. Every checksum of the new snapshot is computed from bytes in memory, never read back: bytes of a step that
// did not reach the disk (cache files are not fsynced) make pages that do not verify, which readers pass over. A
// step that dies before the build file is rewritten is done again from the same cursor, to the same offsets. A build whose snapshot was replaced (a
// compaction, a reader's rewrite after damage), whose binding no longer holds, or whose files do not verify is
// dropped; a later write starts another.
import { fs } from '../../shared/fs';
import { crashPoint } from '../../shared/crash-point';
import type { StoreSpec } from '../codec/store-spec';
import { crc32, seedOf } from './checksum';
import {
  bindingHolds,
  cachePath,
  dropCacheFile,
  HEADER_BYTES,
  isBinding,
  newNonce,
  openCacheFile,
  readBodyFile,
  writeBodyFile,
  writeFully,
  type JournalBinding,
} from './cache-file';
import {
  chunkSeed,
  dropDelta,
  dropSnapshot,
  openSnapshot,
  pageSeed,
  SNAPSHOT_CHUNK_PAGES,
  SNAPSHOT_PAGE,
  snapshotHeader,
  snapshotLayout,
  snapshotName,
} from './snapshot';
import { DerivedDamage } from './sorted-table';
import { openJournalFile } from '../../shared/journal-file';
import { testHook } from '../../shared/test-hooks';

/**
 * Bytes one step reads from the old state and writes of the new body (the codec counts both; about 2 MiB of body,
 * ~50 ms at 1M cases); CRUX_TEST_SNAPSHOT_STEP_BYTES sets it in tests.
 */
const STEP_BYTES = 4 * 1024 * 1024;
const stepBytes = () => Number(testHook('CRUX_TEST_SNAPSHOT_STEP_BYTES')) || STEP_BYTES;

/**
 * Starts rewriting the snapshot of nonce `base` as the state `frozen` (its changes since that snapshot) describes,
 * which holds the journal up to `binding`, and takes the first step: true when that step completed it.
 */
export function startBuild(root: string, path: string, spec: StoreSpec<unknown>, base: number, binding: JournalBinding, frozen: Uint8Array): boolean {
  const codec = spec.snapshot!;
  const nonce = newNonce();
  const next = cachePath(root, nextName(spec.file));
  try {
    fs.rmSync(next, { force: true });
  } catch {
    return false;
  }
  const meta: BuildMeta = { binding, length: null, written: 0, cursor: null, dir: [], chunk: [] };
  const header: BuildHeader = { kind: BUILD_KIND, v: BUILD_VERSION, file: spec.file, codec: codec.version, base, nonce };
  if (!saveBuild(root, spec.file, { header, meta, frozen: Buffer.from(frozen), carry: Buffer.alloc(0) })) return false;
  return stepBuild(root, path, spec);
}

/** Whether a build is under way (its file is there; it is verified by the step that reads it). */
export function buildUnderWay(root: string, file: string): boolean {
  const fd = openCacheFile(root, buildName(file));
  if (fd === undefined) return false;
  fs.closeSync(fd);
  return true;
}

/**
 * Takes the next step of the build under way: true when it completed the new snapshot (renamed over the old one).
 * A build that cannot go on is dropped.
 */
export function stepBuild(root: string, path: string, spec: StoreSpec<unknown>): boolean {
  const build = readBuild(root, spec);
  if (build === undefined) {
    dropBuild(root, spec.file);
    return false;
  }
  let journal: number;
  try {
    journal = openJournalFile(path);
  } catch {
    return false;
  }
  try {
    return stepWith(root, spec, build, journal);
  } catch (error) {
    if (!(error instanceof DerivedDamage)) throw error;
    // A page of the old snapshot does not verify: neither it nor what was being built from it is kept.
    dropBuild(root, spec.file);
    dropSnapshot(root, spec.file);
    return false;
  } finally {
    fs.closeSync(journal);
  }
}

function stepWith(root: string, spec: StoreSpec<unknown>, build: Build, journal: number): boolean {
  const codec = spec.snapshot!;
  const { header, meta } = build;
  const size = fs.fstatSync(journal).size;
  const snap = openSnapshot(root, spec.file, codec.version, journal, size);
  let out: ReturnType<NonNullable<typeof codec.steps>['step']>;
  try {
    // The state every step encodes: the old snapshot (its pages read as the step needs them) and the frozen changes.
    const state = snap?.nonce === header.base && bindingHolds(journal, size, meta.binding, { prefix: true }) ? codec.decode(snap.body) : undefined;
    out = state !== undefined && codec.delta!.apply(state, build.frozen) ? codec.steps!.step(state, meta.cursor ?? undefined, stepBytes()) : undefined;
  } finally {
    snap?.close();
  }
  if (out !== undefined && out.bytes.length === 0 && !out.done) {
    // A step that only counted (the codec's first pass): nothing to write yet.
    saveBuild(root, spec.file, { ...build, meta: { ...meta, length: meta.length ?? out.length ?? null, cursor: out.next } });
    return false;
  }
  const length = meta.length ?? out?.length;
  if (
    out === undefined ||
    length === undefined ||
    !Number.isSafeInteger(length) ||
    meta.written + out.bytes.length > length ||
    (out.done && meta.written + out.bytes.length !== length)
  ) {
    dropBuild(root, spec.file);
    return false;
  }
  const layout = snapshotLayout(length);
  const fd = openNext(root, spec.file, meta.written === 0);
  if (fd === undefined) return false;
  try {
    writeFully(fd, out.bytes, layout.bodyAt + meta.written);
    const sums = checksumPages(fd, layout.tableAt, header.nonce, build, out.bytes, out.done);
    if (!out.done) {
      saveBuild(root, spec.file, {
        ...build,
        meta: { ...meta, length, written: meta.written + out.bytes.length, cursor: out.next, ...sums.meta },
        carry: sums.carry,
      });
      return false;
    }
    if (sums.meta.dir.length !== layout.chunks) {
      dropBuild(root, spec.file);
      return false;
    }
    const dir = Buffer.alloc(layout.dirBytes);
    sums.meta.dir.forEach((c, i) => {
      dir.writeUInt32LE(c, i * 4);
    });
    writeFully(fd, dir, HEADER_BYTES);
    writeFully(fd, snapshotHeader(spec.file, codec.version, header.nonce, meta.binding, length, dir), 0);
    fs.ftruncateSync(fd, layout.bodyAt + length);
  } finally {
    fs.closeSync(fd);
  }
  crashPoint('derived:before-snapshot-install');
  try {
    fs.renameSync(cachePath(root, nextName(spec.file)), cachePath(root, snapshotName(spec.file)));
  } catch {
    // cache/ cannot be written now: the old snapshot stays, and a later write starts again.
    dropBuild(root, spec.file);
    return false;
  }
  // The delta continued the snapshot just replaced; the build is done.
  dropDelta(root, spec.file);
  dropCacheFile(root, buildName(spec.file));
  return true;
}

/**
 * The checksums of the pages `bytes` completed (after the carried bytes of the last unfinished page), each
 * completed chunk of the page table written to `fd` with its CRC-32 added to the directory; `done`: the last page,
 * unfinished or not, and the last chunk too.
 */
function checksumPages(
  fd: number,
  tableAt: number,
  nonce: number,
  build: Build,
  bytes: Uint8Array,
  done: boolean,
): { meta: Pick<BuildMeta, 'dir' | 'chunk'>; carry: Buffer } {
  const PAGE = SNAPSHOT_PAGE;
  // The unfinished page carried over, completed from the first bytes; then the pages of `bytes` after it.
  const all = build.carry.length > 0 ? Buffer.concat([build.carry, bytes]) : bytes;
  const dir = [...build.meta.dir];
  const chunk = [...build.meta.chunk];
  const page = (build.meta.written - build.carry.length) / PAGE;
  // The last page, unfinished, stays carried unless the body is done.
  const full = done ? Math.ceil(all.length / PAGE) : Math.floor(all.length / PAGE);
  const flush = () => {
    const table = Buffer.alloc(chunk.length * 4);
    chunk.forEach((c, i) => {
      table.writeUInt32LE(c, i * 4);
    });
    writeFully(fd, table, tableAt + dir.length * SNAPSHOT_CHUNK_PAGES * 4);
    dir.push(crc32(table, chunkSeed(nonce, dir.length)));
    chunk.length = 0;
  };
  for (let k = 0; k < full; k++) {
    chunk.push(crc32(all.subarray(k * PAGE, (k + 1) * PAGE), pageSeed(nonce, page + k)));
    if (chunk.length === SNAPSHOT_CHUNK_PAGES) flush();
  }
  if (done && chunk.length > 0) flush();
  return { meta: { dir, chunk }, carry: Buffer.from(all.subarray(full * PAGE)) };
}

/** The new snapshot's file for writing: created (empty) for the first bytes, else the one the steps before wrote. */
function openNext(root: string, file: string, first: boolean): number | undefined {
  const c = fs.constants;
  try {
    return fs.openSync(cachePath(root, nextName(file)), c.O_RDWR | c.O_NOFOLLOW | (first ? c.O_CREAT : 0), 0o600);
  } catch {
    // Gone (a writer's rmSync of an abandoned build raced it) or cannot be written: start again later.
    dropBuild(root, file);
    return undefined;
  }
}

// The build file, cache/<journal>.state-build: a body file (cache-file.ts) whose header names the snapshot it
// continues (its nonce) and the new one's nonce (which seeds the body's CRC-32); the body: the meta's length (u32),
// the meta (JSON: the binding the new snapshot will carry, its body's length once known, the bytes written, the
// codec's cursor, the CRC-32s of the page table's chunks completed and of the pages of the next one), the frozen
// changes, and the bytes of the last unfinished page (its checksum needs the rest). Rewritten whole after each step.
const BUILD_KIND = 'crux-snapshot-build';
const BUILD_VERSION = 1;

export const buildName = (file: string) => `${file}.state-build`;
export const nextName = (file: string) => `${file}.state-next`;

interface BuildHeader {
  readonly kind: typeof BUILD_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  /** The nonce of the snapshot whose state (with the frozen changes) the new one encodes. */
  readonly base: number;
  /** The new snapshot's nonce. */
  readonly nonce: number;
}

interface BuildMeta {
  readonly binding: JournalBinding;
  readonly length: number | null;
  readonly written: number;
  readonly cursor: unknown;
  /** CRC-32 of each completed chunk of the page table (the directory so far). */
  readonly dir: readonly number[];
  /** CRC-32s of the pages of the chunk not yet complete. */
  readonly chunk: readonly number[];
}

interface Build {
  readonly header: BuildHeader;
  readonly meta: BuildMeta;
  readonly frozen: Buffer;
  readonly carry: Buffer;
}

/** The build file's own seed: a position no page (from 0) or chunk (below -1) of the new snapshot has. */
const buildSeed = (nonce: number) => seedOf(nonce, -0.5);

function readBuild(root: string, spec: StoreSpec<unknown>): Build | undefined {
  const read = readBodyFile<BuildHeader>(
    root,
    buildName(spec.file),
    (h) => h.kind === BUILD_KIND && h.v === BUILD_VERSION && h.file === spec.file && h.codec === spec.snapshot?.version,
    (h) => buildSeed(h.nonce),
    Number.MAX_SAFE_INTEGER,
  );
  if (read === undefined || read.body.length < 4) return undefined;
  const { header, body } = read;
  try {
    const metaBytes = body.readUInt32LE(0);
    if (4 + metaBytes > body.length) return undefined;
    const doc = JSON.parse(body.toString('utf8', 4, 4 + metaBytes)) as BuildMeta & { frozen: number };
    if (!isMeta(doc) || 4 + metaBytes + doc.frozen > body.length) return undefined;
    const frozen = body.subarray(4 + metaBytes, 4 + metaBytes + doc.frozen);
    const carry = body.subarray(4 + metaBytes + doc.frozen);
    return carry.length === doc.written % SNAPSHOT_PAGE ? { header, meta: doc, frozen, carry } : undefined;
  } catch {
    return undefined;
  }
}

const isMeta = (m: BuildMeta & { frozen: number }): boolean =>
  m !== null &&
  typeof m === 'object' &&
  isBinding(m.binding) &&
  (m.length === null || Number.isSafeInteger(m.length)) &&
  Number.isSafeInteger(m.written) &&
  m.written >= 0 &&
  Number.isSafeInteger(m.frozen) &&
  m.frozen >= 0 &&
  Array.isArray(m.dir) &&
  Array.isArray(m.chunk) &&
  m.chunk.length < SNAPSHOT_CHUNK_PAGES &&
  [...m.dir, ...m.chunk].every((c) => Number.isInteger(c) && c >= 0 && c <= 0xffffffff);

function saveBuild(root: string, file: string, build: Build): boolean {
  const meta = Buffer.from(JSON.stringify({ ...build.meta, frozen: build.frozen.length }));
  const body = Buffer.concat([Buffer.alloc(4), meta, build.frozen, build.carry]);
  body.writeUInt32LE(meta.length, 0);
  crashPoint('derived:before-build-save');
  if (writeBodyFile(root, buildName(file), build.header, body, buildSeed(build.header.nonce))) return true;
  dropBuild(root, file);
  return false;
}

/** Removes a build under way and what it wrote. */
export function dropBuild(root: string, file: string): void {
  dropCacheFile(root, buildName(file));
  dropCacheFile(root, nextName(file));
}
