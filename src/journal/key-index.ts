// The key index: which journal lines concern each entity, so that commands on one session read a few lines
// instead of replaying the whole journal. It is a cache, derived and disposable, kept in cache/<file>.idx.
//
// Layout: a 512-byte header line (JSON, space-padded) naming the journal state it describes — device, inode,
// size, mtime and ctime in nanoseconds, the chain head, the line count and a live-bytes estimate — then one
// line per journal record: `<JSON key>\t<line>\t<offset>\t<length>[\tR]`, R marking a record that alone
// determines its entity (reads of that key start there). The index is valid only while the
// journal's stat matches the header exactly; anything else (another program's edit, a repair, a crash
// between the journal append and the index update) sends readers back to a full, verifying replay.
// Only writers, under the lock, write it: the body lines first, the header last.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { join } from 'node:path';
import { ensurePrivateDir, FILE_MODE } from './durable-fs';
import type { JournalRecord } from './record';
import type { StoreSpec } from './store-spec';
import type { LinePosition } from './scan';

export const CACHE_DIR = 'cache';
export const HEADER_BYTES = 512;
const INDEX_VERSION = 2;

export interface JournalStat {
  readonly dev: string;
  readonly ino: string;
  readonly size: number;
  readonly mtime_ns: string;
  readonly ctime_ns: string;
}

export interface IndexHeader extends JournalStat {
  readonly v: number;
  readonly seq: number;
  readonly h: string;
  readonly lines: number;
  /** Sum over keys of each key's largest line: what compaction would keep, roughly. */
  readonly live: number;
}

export interface IndexEntry extends LinePosition {
  readonly key: string;
  /** The record alone determines its entity: the key's earlier lines need not be read (StoreSpec.resets). */
  readonly reset?: boolean;
}

/** The index entry of a record, if its store keys it. */
export function entryFor(spec: StoreSpec<any>, record: JournalRecord, at: LinePosition): IndexEntry | undefined {
  const key = spec.keyOf?.(record);
  if (key === undefined) return undefined;
  return spec.resets?.(record) ? { key, ...at, reset: true } : { key, ...at };
}

export const indexPath = (root: string, file: string) => join(root, CACHE_DIR, `${file}.idx`);

/** The journal's identity and version as the index records it; undefined when it does not exist. */
export function statJournal(path: string | number): JournalStat | undefined {
  let st: import('node:fs').BigIntStats;
  try {
    st = typeof path === 'number' ? fs.fstatSync(path, { bigint: true }) : fs.statSync(path, { bigint: true });
  } catch {
    return undefined;
  }
  return { dev: String(st.dev), ino: String(st.ino), size: Number(st.size), mtime_ns: String(st.mtimeNs), ctime_ns: String(st.ctimeNs) };
}

export const sameStat = (a: JournalStat, b: JournalStat) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtime_ns === b.mtime_ns && a.ctime_ns === b.ctime_ns;

/** The JSON header line of a cache file (a fixed 512 bytes, so the payload after it stays aligned). */
export function readCacheHeader<H>(path: string): H | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(HEADER_BYTES);
    if (fs.readSync(fd, buf, 0, HEADER_BYTES, 0) !== HEADER_BYTES || buf[HEADER_BYTES - 1] !== 10) return undefined;
    return JSON.parse(buf.toString('utf8', 0, HEADER_BYTES - 1)) as H;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether the index describes the journal exactly as it is: proof that crux wrote its last bytes. */
export function indexMatches(root: string, file: string, journal: JournalStat): boolean {
  const header = readCacheHeader<IndexHeader>(indexPath(root, file));
  return header?.v === INDEX_VERSION && sameStat(header, journal);
}

export interface OpenIndex {
  readonly header: IndexHeader;
  /** Every line of `key`, in journal order. */
  linesOf(key: string): LinePosition[];
}

/** Opens the index of a journal if it describes the journal exactly as it is now. */
export function openIndex(root: string, file: string, journal: JournalStat): OpenIndex | undefined {
  let text: string;
  try {
    text = fs.readFileSync(indexPath(root, file), 'utf8');
  } catch {
    return undefined;
  }
  if (text.length < HEADER_BYTES || text[HEADER_BYTES - 1] !== '\n') return undefined;
  let header: IndexHeader;
  try {
    header = JSON.parse(text.slice(0, HEADER_BYTES - 1));
  } catch {
    return undefined;
  }
  if (header.v !== INDEX_VERSION || !sameStat(header, journal)) return undefined;
  return {
    header,
    linesOf(key) {
      // From the end backwards, stopping at the key's last resetting line: a session put a thousand times
      // costs the same to read as one put once.
      const needle = `\n${JSON.stringify(key)}\t`;
      const found: LinePosition[] = [];
      for (let at = text.lastIndexOf(needle); at >= HEADER_BYTES - 1; at = at === 0 ? -1 : text.lastIndexOf(needle, at - 1)) {
        const end = text.indexOf('\n', at + needle.length);
        if (end === -1) continue;
        const [line, offset, length, reset] = text.slice(at + needle.length, end).split('\t');
        // Lines past the header's size belong to a write whose header is not written yet.
        if (Number(offset) + Number(length) >= header.size) continue;
        found.push({ line: Number(line), offset: Number(offset), length: Number(length) });
        if (reset === 'R') break;
      }
      return found.reverse();
    },
  };
}

const headerText = (header: IndexHeader) => `${JSON.stringify(header).padEnd(HEADER_BYTES - 1)}\n`;
const bodyText = (entries: readonly IndexEntry[]) =>
  entries.map((e) => `${JSON.stringify(e.key)}\t${e.line}\t${e.offset}\t${e.length}${e.reset ? '\tR' : ''}\n`).join('');

/** Writes a whole new index (after a full replay, a compaction or a repair). */
export function writeIndex(root: string, file: string, fields: Omit<IndexHeader, 'v'>, entries: readonly IndexEntry[]): void {
  const header: IndexHeader = { v: INDEX_VERSION, ...fields };
  ensurePrivateDir(join(root, CACHE_DIR));
  const path = indexPath(root, file);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, headerText(header) + bodyText(entries), { mode: FILE_MODE });
    fs.renameSync(temp, path);
  } catch {
    // A cache that cannot be written only costs speed; remove what is half-written.
    fs.rmSync(temp, { force: true });
    dropIndex(root, file);
  }
}

/** Adds lines to a valid index in place: body first, header last, so a crash leaves it invalid, never wrong. */
export function extendIndex(root: string, file: string, fields: Omit<IndexHeader, 'v'>, entries: readonly IndexEntry[]): void {
  const header: IndexHeader = { v: INDEX_VERSION, ...fields };
  const path = indexPath(root, file);
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r+');
    const end = fs.fstatSync(fd).size;
    fs.writeSync(fd, bodyText(entries), end);
    fs.writeSync(fd, headerText(header), 0);
  } catch {
    dropIndex(root, file);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function dropIndex(root: string, file: string): void {
  fs.rmSync(indexPath(root, file), { force: true });
}

/** Tracks the per-key largest line while entries are added, for the live-bytes estimate. */
export class LiveEstimate {
  private readonly largest = new Map<string, number>();
  total = 0;

  constructor(initial = 0) {
    this.total = initial;
  }

  /** Seeds a key's largest line from its known lines (when extending an index). */
  seed(key: string, lines: readonly LinePosition[]): void {
    if (!this.largest.has(key)) this.largest.set(key, Math.max(0, ...lines.map((l) => l.length)));
  }

  add(key: string, length: number): void {
    const before = this.largest.get(key) ?? 0;
    if (length > before) {
      this.largest.set(key, length);
      this.total += length - before;
    }
  }
}
