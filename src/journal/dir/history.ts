// history/: what compaction drops, kept. Each compaction archives the old journal here (history-archive.ts),
// named after its head's sequence number, so `session history` and `session get --at` can read every record ever
// kept; a record is kept once: the records a compaction wrote to restate history already here are left out of
// the next archive (policy.ts, planCompaction). Retention (CRUX_HISTORY_KEEP, CRUX_HISTORY_MAX_BYTES) deletes
// the oldest files at a later compaction; nothing else reads this directory.
//
// Crash safety: a compaction archives before it renames the new journal over the old one, so a crash between the
// two leaves a history file whose records the journal still holds (its head is not before the journal's first
// record; a hard link is the journal's own inode). Such a file is never read as history and is replaced by the
// next compaction; readers also skip any record whose seq they have seen.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { asStorageError, fsyncDir } from '../../shared/durable-fs';
import { decodeRecord, VERIFY_ALL, type JournalRecord } from '../codec/record';
import type { HistoryRetention } from '../core/history';
import { openJournalFile } from '../../shared/journal-file';

export const HISTORY_DIR = 'history';

export { DEFAULT_HISTORY_RETENTION, historyName, type HistoryRetention } from '../core/history';

const stem = (file: string) => file.replace(/\.jsonl$/, '');
const headOfName = (name: string) => Number(/\.(\d{12})\.jsonl$/.exec(name)?.[1]);

export interface HistoryFile {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
  /** The sequence number of the last record it holds (from its name). */
  readonly head: number;
}

/**
 * The history files of journal `file`, oldest first; what a crashed compaction left (records the journal still
 * holds) is left out. No history/ is no history; one that cannot be read (permission denied, I/O) is an error
 * naming it, never "no history" (SPEC §3).
 */
export function listHistory(root: string, file: string): HistoryFile[] {
  return historyFiles(root, file).filter((h) => !h.leftover);
}

/** Every file of history/ named as journal `file`'s history, oldest first, each marked when it is a crashed compaction's. */
export function historyFiles(root: string, file: string): (HistoryFile & { readonly leftover: boolean })[] {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, HISTORY_DIR));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw asStorageError(error, join(root, HISTORY_DIR));
  }
  const journal = fs.statSync(join(root, file), { throwIfNoEntry: false });
  const firstSeq = journal === undefined ? undefined : firstSeqOf(join(root, file));
  const pattern = new RegExp(`^${stem(file).replace(/[.]/g, '\\.')}\\.\\d{12}\\.jsonl$`);
  const out: (HistoryFile & { leftover: boolean })[] = [];
  for (const name of names.filter((n) => pattern.test(n)).sort()) {
    const path = join(root, HISTORY_DIR, name);
    const st = fs.statSync(path, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile()) continue;
    const head = headOfName(name);
    const leftover = (journal !== undefined && st.ino === journal.ino) || (firstSeq !== undefined && head >= firstSeq);
    out.push({ name: join(HISTORY_DIR, name), path, bytes: st.size, head, leftover });
  }
  return out;
}

/** The sequence number of a journal's first record, read from the start of its first line (undefined if none). */
function firstSeqOf(path: string): number | undefined {
  const seq = /^\{"v":\d+,"seq":(\d+)[,}]/.exec(headBytes(path, 64)?.toString('latin1') ?? '')?.[1];
  return seq === undefined ? undefined : Number(seq);
}

/** The first `length` bytes of a file (fewer if it is shorter), or undefined when it cannot be opened. */
function headBytes(path: string, length: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openJournalFile(path);
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(length);
    return buf.subarray(0, fs.readSync(fd, buf, 0, length, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/** The sequence number of the newest record journal `file`'s history holds (undefined: no history). */
export function historyHead(root: string, file: string): number | undefined {
  return listHistory(root, file).at(-1)?.head;
}

/** Deletes history past its retention (all of it with `drop`), oldest first, across journals; returns what it deleted. */
export function pruneHistory(root: string, retention: HistoryRetention, now: number, drop = false): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, HISTORY_DIR));
  } catch {
    return [];
  }
  const stems = new Set(names.map((n) => /^(.+)\.\d{12}\.jsonl$/.exec(n)?.[1]).filter((n) => n !== undefined));
  const all = [...stems].flatMap((s) => listHistory(root, `${s}.jsonl`)).map((h) => ({ ...h, newest: newestTime(h.path) }));
  all.sort((a, b) => a.newest - b.newest || (a.name < b.name ? -1 : 1));
  let total = all.reduce((sum, h) => sum + h.bytes, 0);
  const deleted: string[] = [];
  try {
    for (const h of all) {
      if (!drop && h.newest >= now - retention.keepMs && total <= retention.maxBytes) break;
      fs.rmSync(h.path, { force: true });
      total -= h.bytes;
      deleted.push(h.name);
    }
    if (deleted.length > 0) fsyncDir(join(root, HISTORY_DIR));
  } catch (error) {
    throw asStorageError(error, join(root, HISTORY_DIR));
  }
  return deleted;
}

/**
 * The time of a history file's last record (its newest), read from the file's end; when its last line has no
 * time to read, the file's own (never the epoch, which would delete it at once).
 */
function newestTime(path: string): number {
  const fd = openJournalFile(path);
  try {
    const { size, mtimeMs } = fs.fstatSync(fd);
    const length = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, size - length);
    const text = buf.toString('utf8').trimEnd();
    const line = text.slice(text.lastIndexOf('\n') + 1);
    const ts = /"ts":"([^"]+)"/.exec(line)?.[1];
    const at = ts === undefined ? NaN : Date.parse(ts);
    return Number.isNaN(at) ? mtimeMs : at;
  } finally {
    fs.closeSync(fd);
  }
}

/** The journal's first record (its opening snapshot after a compaction), if its first line verifies. */
export function firstRecord(path: string): JournalRecord | undefined {
  const head = headBytes(path, 64 * 1024);
  const nl = head?.indexOf(10) ?? -1;
  if (head === undefined || nl === -1) return undefined;
  const decoded = decodeRecord(head.toString('utf8', 0, nl), VERIFY_ALL);
  return decoded.ok ? decoded.record : undefined;
}
