// The state snapshot: a store's whole folded state, encoded by the store, cached in cache/<file>.state, so
// that whole-store queries decode it and replay only the records written after it.
//
// Layout: a 512-byte header line (JSON, space-padded; the payload after it stays 8-byte aligned) naming the
// journal it was taken from — device, inode, size, mtime/ctime, chain head, line count and where the head
// record sits — then the store's encoding. It is used while the journal is the same file (device and inode)
// and at least as long, and the line it names as the head still carries that hash; the records after it are
// replayed and verified. A rewrite (compaction, repair) makes a new file, so an old snapshot is never used
// for it. Written only by writers, under the lock, atomically (temp file and rename); losing it costs speed.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { join } from 'node:path';
import { ensurePrivateDir, FILE_MODE } from './durable-fs';
import { CACHE_DIR, HEADER_BYTES, readCacheHeader, type JournalStat } from './key-index';

const SNAPSHOT_VERSION = 1;

export interface SnapshotHeader extends JournalStat {
  readonly v: number;
  readonly codec: number;
  readonly seq: number;
  readonly h: string;
  readonly lines: number;
  /** Offset and length of the head record's line, to check it is still there. */
  readonly head_offset: number;
  readonly head_length: number;
}

export const snapshotPath = (root: string, file: string) => join(root, CACHE_DIR, `${file}.state`);

export function readSnapshotHeader(root: string, file: string): SnapshotHeader | undefined {
  const header = readCacheHeader<SnapshotHeader>(snapshotPath(root, file));
  return header?.v === SNAPSHOT_VERSION ? header : undefined;
}

/** The snapshot's payload, if its header matches `codec` and the journal `stat` may continue it. */
export function openSnapshot(root: string, file: string, codec: number, stat: JournalStat): { header: SnapshotHeader; payload: Uint8Array } | undefined {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(snapshotPath(root, file));
  } catch {
    return undefined;
  }
  if (bytes.length < HEADER_BYTES || bytes[HEADER_BYTES - 1] !== 10) return undefined;
  let header: SnapshotHeader;
  try {
    header = JSON.parse(bytes.toString('utf8', 0, HEADER_BYTES - 1));
  } catch {
    return undefined;
  }
  if (header.v !== SNAPSHOT_VERSION || header.codec !== codec) return undefined;
  if (header.dev !== stat.dev || header.ino !== stat.ino || header.size > stat.size) return undefined;
  return { header, payload: bytes.subarray(HEADER_BYTES) };
}

export function writeSnapshot(root: string, file: string, header: Omit<SnapshotHeader, 'v'>, payload: Uint8Array): void {
  const path = snapshotPath(root, file);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    ensurePrivateDir(join(root, CACHE_DIR));
    const head = Buffer.from(`${JSON.stringify({ v: SNAPSHOT_VERSION, ...header }).padEnd(HEADER_BYTES - 1)}\n`);
    if (head.length !== HEADER_BYTES) return;
    const fd = fs.openSync(temp, 'w', FILE_MODE);
    try {
      fs.writeSync(fd, head, 0, head.length, 0);
      fs.writeSync(fd, payload, 0, payload.length, HEADER_BYTES);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, path);
  } catch {
    // A cache that cannot be written only costs speed.
    fs.rmSync(temp, { force: true });
    dropSnapshot(root, file);
  }
}

export function dropSnapshot(root: string, file: string): void {
  fs.rmSync(snapshotPath(root, file), { force: true });
}
