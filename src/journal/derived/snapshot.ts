// Over 300 lines: the snapshot's framing and its delta's, opened together.
// The state snapshot: a store's whole folded state, encoded by the store, in cache/<journal>.state, so that
// whole-store queries (case retrieve) read what they need of it and replay only the records written after it.
//
// File: the 512-byte header (cache-file.ts) naming the store's codec and its version, the journal binding,
// the body's length and the CRC-32 of the directory; the directory (one CRC-32 per chunk of the page table,
// padded to 8 bytes); the page table (one CRC-32 per 4 KiB page of the body, each seeded with the file's
// nonce and the page number; padded to 8 bytes); then the body. The header and the directory are verified
// when the snapshot is opened, a chunk of the page table (CHUNK_PAGES pages' checksums) when a page it covers
// is first read, and each page of the body then, so a query pays for the pages it touches (the postings of
// its terms, its candidates' numbers), not for the whole file: opening a snapshot of 1M cases verifies 2 KiB,
// not its 140 KiB page table. It is used only when the binding holds for a prefix of the journal; the
// records after that prefix are read from the journal and verified as a replay would. Written atomically
// (temp + rename) by writers and by readers that had to replay; a snapshot that fails any check is bypassed
// and replaced.
import { fs } from '../../shared/fs';
import type { SnapshotBody } from '../codec/store-spec';
import { crc32, seedOf } from './checksum';
import {
  bindingHolds,
  dropCacheFile,
  openCacheFile,
  encodeHeader,
  HEADER_BYTES,
  isBinding,
  newNonce,
  readBodyFile,
  readHeader,
  writeBodyFile,
  writeCacheFile,
  type JournalBinding,
} from './cache-file';
import { DerivedDamage } from './sorted-table';

const SNAPSHOT_KIND = 'crux-snapshot';
const SNAPSHOT_VERSION = 4;
const PAGE = 4096;
/** Pages whose checksums one chunk of the page table holds (256 bytes of table, 256 KiB of body). */
const CHUNK_PAGES = 64;

interface SnapshotHeader {
  readonly kind: typeof SNAPSHOT_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  readonly nonce: number;
  readonly binding: JournalBinding;
  readonly body_bytes: number;
  /** CRC-32 of the directory: one CRC-32 per chunk of the page table. */
  readonly dir_crc: number;
}

export const snapshotName = (file: string) => `${file}.state`;
export const SNAPSHOT_PAGE = PAGE;
export const SNAPSHOT_CHUNK_PAGES = CHUNK_PAGES;
const pages = (bytes: number) => Math.ceil(bytes / PAGE);
const chunks = (bytes: number) => Math.ceil(pages(bytes) / CHUNK_PAGES);
const pad8 = (n: number) => (n + 7) & ~7;
const tableBytes = (bytes: number) => pad8(pages(bytes) * 4);
const dirBytes = (bytes: number) => pad8(chunks(bytes) * 4);
/** A chunk's seed: below every page's (pages are numbered from 0). */
export const chunkSeed = (nonce: number, chunk: number) => seedOf(nonce, -1 - chunk);
export const pageSeed = (nonce: number, page: number) => seedOf(nonce, page);

/** Where a snapshot of a body of `bodyBytes` keeps its parts: directory, page table and body, and their counts. */
export function snapshotLayout(bodyBytes: number) {
  const tableAt = HEADER_BYTES + dirBytes(bodyBytes);
  return {
    dirAt: HEADER_BYTES,
    dirBytes: dirBytes(bodyBytes),
    tableAt,
    bodyAt: tableAt + tableBytes(bodyBytes),
    pages: pages(bodyBytes),
    chunks: chunks(bodyBytes),
  };
}

/** The header of a snapshot whose directory is `dir`. */
export function snapshotHeader(file: string, codec: number, nonce: number, binding: JournalBinding, bodyBytes: number, dir: Uint8Array): Buffer {
  return encodeHeader({ kind: SNAPSHOT_KIND, v: SNAPSHOT_VERSION, file, codec, nonce, binding, body_bytes: bodyBytes, dir_crc: crc32(dir) });
}

/** The size of journal the snapshot covers, from its header alone (undefined when none verifies). */
export function snapshotCovers(root: string, file: string): number | undefined {
  return snapshotFacts(root, file)?.covers;
}

/** From the snapshot's header alone: the size of journal it covers, its body's size and its nonce. */
export function snapshotFacts(root: string, file: string): { covers: number; bodyBytes: number; nonce: number } | undefined {
  const fd = openCacheFile(root, snapshotName(file));
  if (fd === undefined) return undefined;
  try {
    const header = readHeader<SnapshotHeader>(fd);
    if (header?.kind !== SNAPSHOT_KIND || header.v !== SNAPSHOT_VERSION || !isBinding(header.binding)) return undefined;
    return { covers: header.binding.size, bodyBytes: header.body_bytes, nonce: header.nonce };
  } finally {
    fs.closeSync(fd);
  }
}

/** A snapshot open for reading: its binding, and its body read on demand. Close it when done. */
export interface OpenSnapshot {
  readonly binding: JournalBinding;
  /** The file's nonce: what a file derived from this snapshot names it by. */
  readonly nonce: number;
  readonly body: SnapshotBody;
  close(): void;
}

/** The snapshot, if its header and page table verify for codec `codec` and it describes a prefix of the journal at `journalFd`. */
export function openSnapshot(root: string, file: string, codec: number, journalFd: number, journalSize: number): OpenSnapshot | undefined {
  const fd = openCacheFile(root, snapshotName(file));
  if (fd === undefined) return undefined;
  let ok = false;
  try {
    const header = readHeader<SnapshotHeader>(fd);
    if (header?.kind !== SNAPSHOT_KIND || header.v !== SNAPSHOT_VERSION || header.file !== file || header.codec !== codec || !isBinding(header.binding))
      return undefined;
    const { body_bytes: bodyBytes, nonce } = header;
    if (!Number.isSafeInteger(bodyBytes) || bodyBytes < 0 || !Number.isInteger(nonce)) return undefined;
    const tableAt = HEADER_BYTES + dirBytes(bodyBytes);
    const bodyAt = tableAt + tableBytes(bodyBytes);
    if (fs.fstatSync(fd).size !== bodyAt + bodyBytes) return undefined;
    const dir = Buffer.allocUnsafe(dirBytes(bodyBytes));
    if (fs.readSync(fd, dir, 0, dir.length, HEADER_BYTES) !== dir.length || crc32(dir) !== header.dir_crc) return undefined;
    if (!bindingHolds(journalFd, journalSize, header.binding, { prefix: true })) return undefined;
    ok = true;
    return {
      binding: header.binding,
      nonce,
      body: new PagedBody(fd, bodyAt, bodyBytes, new PageTable(fd, tableAt, dir, pages(bodyBytes), nonce), nonce),
      close: () => fs.closeSync(fd),
    };
  } finally {
    if (!ok) fs.closeSync(fd);
  }
}

/** The page table, read and verified a chunk at a time against the directory. */
class PageTable {
  private readonly chunks = new Map<number, Buffer>();

  constructor(
    private readonly fd: number,
    private readonly at: number,
    private readonly dir: Buffer,
    private readonly pages: number,
    private readonly nonce: number,
  ) {}

  /** The checksums of pages first..last are at hand (their chunks read in one positioned read, and verified). */
  load(first: number, last: number): void {
    const from = Math.floor(first / CHUNK_PAGES);
    const to = Math.floor(last / CHUNK_PAGES);
    let c = from;
    while (c <= to) {
      if (this.chunks.has(c)) {
        c += 1;
        continue;
      }
      let end = c;
      while (end < to && !this.chunks.has(end + 1)) end += 1;
      // The last chunk holds the checksums of the pages left (fewer than CHUNK_PAGES, maybe).
      const bytes = Buffer.allocUnsafeSlow((Math.min(this.pages, (end + 1) * CHUNK_PAGES) - c * CHUNK_PAGES) * 4);
      let n: number;
      try {
        n = fs.readSync(this.fd, bytes, 0, bytes.length, this.at + c * CHUNK_PAGES * 4);
      } catch {
        throw new DerivedDamage('snapshot unreadable');
      }
      if (n !== bytes.length) throw new DerivedDamage('snapshot truncated');
      for (let k = c; k <= end; k++) {
        const piece = bytes.subarray((k - c) * CHUNK_PAGES * 4, (k - c + 1) * CHUNK_PAGES * 4);
        if (crc32(piece, chunkSeed(this.nonce, k)) !== this.dir.readUInt32LE(k * 4)) {
          throw new DerivedDamage(`snapshot page table chunk ${k} does not verify`);
        }
        this.chunks.set(k, piece);
      }
      c = end + 1;
    }
  }

  /** The checksum of page `p` (load() must have covered it). */
  crcOf(p: number): number {
    const chunk = this.chunks.get(Math.floor(p / CHUNK_PAGES))!;
    return chunk.readUInt32LE((p % CHUNK_PAGES) * 4);
  }
}

/** A body read page by page, each page verified against the page table once. */
class PagedBody implements SnapshotBody {
  private readonly verified = new Map<number, Buffer>();

  constructor(
    private readonly fd: number,
    private readonly at: number,
    readonly length: number,
    private readonly table: PageTable,
    private readonly nonce: number,
  ) {}

  read(offset: number, length: number): Buffer {
    if (!(offset >= 0 && length >= 0 && offset + length <= this.length)) throw new DerivedDamage('a read past the snapshot body');
    if (length === 0) return Buffer.alloc(0);
    const first = Math.floor(offset / PAGE);
    const last = Math.floor((offset + length - 1) / PAGE);
    // Within one verified page: a view of it.
    const one = first === last ? this.verified.get(first) : undefined;
    if (one !== undefined) return one.subarray(offset - first * PAGE, offset - first * PAGE + length);
    let fresh = true;
    for (let p = first; p <= last && fresh; p++) fresh = !this.verified.has(p);
    if (fresh) {
      // No page of the range read yet: one positioned read, verified page by page, returned as a view.
      const run = this.readRun(first, last);
      return run.subarray(offset - first * PAGE, offset - first * PAGE + length);
    }
    // Runs of pages not yet read: one positioned read each.
    for (let p = first; p <= last; ) {
      if (this.verified.has(p)) {
        p += 1;
        continue;
      }
      let end = p;
      while (end < last && !this.verified.has(end + 1)) end += 1;
      this.readRun(p, end);
      p = end + 1;
    }
    const out = Buffer.allocUnsafe(length);
    for (let p = first; p <= last; p++) {
      const page = this.verified.get(p)!;
      const start = Math.max(offset, p * PAGE);
      const end = Math.min(offset + length, p * PAGE + page.length);
      page.copy(out, start - offset, start - p * PAGE, end - p * PAGE);
    }
    return out;
  }

  /** Reads pages first..last in one positioned read and verifies each; they are kept as views of it. */
  private readRun(first: number, last: number): Buffer {
    const from = first * PAGE;
    const to = Math.min(this.length, (last + 1) * PAGE);
    const run = Buffer.allocUnsafeSlow(to - from);
    let n: number;
    try {
      n = fs.readSync(this.fd, run, 0, run.length, this.at + from);
    } catch {
      throw new DerivedDamage('snapshot unreadable');
    }
    if (n !== run.length) throw new DerivedDamage('snapshot truncated');
    this.table.load(first, last);
    for (let q = first; q <= last; q++) {
      const page = run.subarray((q - first) * PAGE, Math.min(run.length, (q - first + 1) * PAGE));
      if (crc32(page, seedOf(this.nonce, q)) !== this.table.crcOf(q)) throw new DerivedDamage(`snapshot page ${q} does not verify`);
      this.verified.set(q, page);
    }
    return run;
  }
}

/** The whole body of a snapshot as bytes, verified (for codecs that decode everything at once). */
export function readWhole(body: SnapshotBody): Buffer {
  return body.read(0, body.length);
}

export function writeSnapshot(root: string, file: string, codec: number, binding: JournalBinding, body: Uint8Array): void {
  const nonce = newNonce();
  const { table, dir } = pageTable(nonce, body.length, (p) => body.subarray(p * PAGE, (p + 1) * PAGE));
  if (!writeCacheFile(root, snapshotName(file), [snapshotHeader(file, codec, nonce, binding, body.length, dir), dir, table, body])) dropSnapshot(root, file);
}

/** The page table of a body of `length` bytes whose page `p` is pageAt(p) (asked in order), and its directory. */
export function pageTable(nonce: number, length: number, pageAt: (p: number) => Uint8Array): { table: Buffer; dir: Buffer } {
  const table = Buffer.alloc(tableBytes(length));
  for (let p = 0; p < pages(length); p++) table.writeUInt32LE(crc32(pageAt(p), pageSeed(nonce, p)), p * 4);
  const dir = Buffer.alloc(dirBytes(length));
  const tableUsed = pages(length) * 4;
  for (let c = 0; c < chunks(length); c++) {
    const piece = table.subarray(c * CHUNK_PAGES * 4, Math.min(tableUsed, (c + 1) * CHUNK_PAGES * 4));
    dir.writeUInt32LE(crc32(piece, chunkSeed(nonce, c)), c * 4);
  }
  return { table, dir };
}

export function dropSnapshot(root: string, file: string): void {
  dropCacheFile(root, snapshotName(file));
}

// The snapshot's delta: a store's changes since its snapshot (the records written after it, folded), in the store's
// own encoding, in cache/<journal>.state-delta, so that readers after many single writes apply them at once instead
// of verifying, decoding and folding every record after the snapshot on each call. A body file (cache-file.ts) whose
// header names the store's codec, the snapshot it continues (by its nonce, which seeds the body's CRC-32) and the
// binding it reaches. Used only with that snapshot and while its binding holds for a prefix of the journal; written
// whole by readers that folded DELTA_AFTER_RECORDS records or more past the snapshot and its delta (snapshot-load.ts).
const DELTA_KIND = 'crux-snapshot-delta';
const DELTA_VERSION = 1;
/** A bigger delta is not read: the snapshot is rewritten long before one grows that far (snapshot-load.ts). */
const DELTA_MAX_BYTES = 64 * 1024 * 1024;

interface DeltaHeader {
  readonly kind: typeof DELTA_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  /** The nonce of the snapshot this delta continues. */
  readonly base: number;
  readonly binding: JournalBinding;
}

export const deltaName = (file: string) => `${file}.state-delta`;
const deltaSeed = (base: number) => seedOf(base, -1);

/** The delta continuing the snapshot of nonce `base` (codec `codec`), if it verifies and its binding holds for a prefix of the journal at `journalFd`. */
export function readDelta(root: string, file: string, codec: number, base: number, journalFd: number, journalSize: number) {
  const read = readBodyFile<DeltaHeader>(
    root,
    deltaName(file),
    (h) => h.kind === DELTA_KIND && h.v === DELTA_VERSION && h.file === file && h.codec === codec && h.base === base && isBinding(h.binding),
    () => deltaSeed(base),
    DELTA_MAX_BYTES,
  );
  return read !== undefined && bindingHolds(journalFd, journalSize, read.header.binding, { prefix: true })
    ? { binding: read.header.binding, body: read.body }
    : undefined;
}

export function writeDelta(root: string, file: string, codec: number, base: number, binding: JournalBinding, body: Uint8Array): void {
  if (!writeBodyFile(root, deltaName(file), { kind: DELTA_KIND, v: DELTA_VERSION, file, codec, base, binding }, body, deltaSeed(base))) dropDelta(root, file);
}

export function dropDelta(root: string, file: string): void {
  dropCacheFile(root, deltaName(file));
}
