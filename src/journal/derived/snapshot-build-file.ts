// The file of a snapshot rewrite under way (snapshot-build.ts), cache/<journal>.state-build: the 512-byte header
// (cache-file.ts) naming the snapshot it continues (its nonce), the new one's nonce, and the body's length and CRC-32
// (seeded with the new nonce); the body: the meta's length (u32), the meta (JSON: the binding the new snapshot will
// carry, its body's length once known, the bytes written, the codec's cursor, the CRC-32s of the page table's chunks
// completed and of the pages of the next one), the frozen changes, and the bytes of the last unfinished page (its
// checksum needs the rest). Rewritten whole (temp + rename) after each step; one that does not verify is dropped.
import { fs } from '../../shared/fs';
import { crashPoint } from '../../shared/crash-point';
import type { StoreSpec } from '../codec/store-spec';
import { crc32, seedOf } from './checksum';
import { dropCacheFile, encodeHeader, HEADER_BYTES, isBinding, openCacheFile, readHeader, writeCacheFile, type JournalBinding } from './cache-file';
import { SNAPSHOT_CHUNK_PAGES, SNAPSHOT_PAGE } from './snapshot';

export const BUILD_KIND = 'crux-snapshot-build';
export const BUILD_VERSION = 1;

export const buildName = (file: string) => `${file}.state-build`;
export const nextName = (file: string) => `${file}.state-next`;

export interface BuildHeader {
  readonly kind: typeof BUILD_KIND;
  readonly v: number;
  readonly file: string;
  readonly codec: number;
  /** The nonce of the snapshot whose state (with the frozen changes) the new one encodes. */
  readonly base: number;
  /** The new snapshot's nonce. */
  readonly nonce: number;
  readonly body_bytes: number;
  readonly body_crc: number;
}

export interface BuildMeta {
  readonly binding: JournalBinding;
  readonly length: number | null;
  readonly written: number;
  readonly cursor: unknown;
  /** CRC-32 of each completed chunk of the page table (the directory so far). */
  readonly dir: readonly number[];
  /** CRC-32s of the pages of the chunk not yet complete. */
  readonly chunk: readonly number[];
}

export interface Build {
  readonly header: BuildHeader;
  readonly meta: BuildMeta;
  readonly frozen: Buffer;
  readonly carry: Buffer;
}

export function readBuild(root: string, spec: StoreSpec<unknown>): Build | undefined {
  const fd = openCacheFile(root, buildName(spec.file));
  if (fd === undefined) return undefined;
  try {
    const header = readHeader<BuildHeader>(fd);
    if (header?.kind !== BUILD_KIND || header.v !== BUILD_VERSION || header.file !== spec.file || header.codec !== spec.snapshot?.version) return undefined;
    const bytes = header.body_bytes;
    if (!Number.isSafeInteger(bytes) || bytes < 4 || fs.fstatSync(fd).size !== HEADER_BYTES + bytes) return undefined;
    const body = Buffer.allocUnsafe(bytes);
    if (fs.readSync(fd, body, 0, bytes, HEADER_BYTES) !== bytes || crc32(body, bodySeed(header.nonce)) !== header.body_crc) return undefined;
    const metaBytes = body.readUInt32LE(0);
    if (4 + metaBytes > bytes) return undefined;
    const doc = JSON.parse(body.toString('utf8', 4, 4 + metaBytes)) as BuildMeta & { frozen: number };
    if (!isMeta(doc) || 4 + metaBytes + doc.frozen > bytes) return undefined;
    const frozen = body.subarray(4 + metaBytes, 4 + metaBytes + doc.frozen);
    const carry = body.subarray(4 + metaBytes + doc.frozen);
    if (carry.length !== doc.written % SNAPSHOT_PAGE) return undefined;
    return { header, meta: doc, frozen, carry };
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
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

/** The build file's own seed: a position no page (from 0) or chunk (below -1) of the new snapshot has. */
const bodySeed = (nonce: number) => seedOf(nonce, -0.5);

export function saveBuild(root: string, file: string, build: Build): boolean {
  const meta = Buffer.from(JSON.stringify({ ...build.meta, frozen: build.frozen.length }));
  const body = Buffer.concat([Buffer.alloc(4), meta, build.frozen, build.carry]);
  body.writeUInt32LE(meta.length, 0);
  const header = encodeHeader({ ...build.header, body_bytes: body.length, body_crc: crc32(body, bodySeed(build.header.nonce)) });
  crashPoint('derived:before-build-save');
  if (writeCacheFile(root, buildName(file), [header, body])) return true;
  dropBuild(root, file);
  return false;
}

/** Removes a build under way and what it wrote. */
export function dropBuild(root: string, file: string): void {
  dropCacheFile(root, buildName(file));
  dropCacheFile(root, nextName(file));
}
