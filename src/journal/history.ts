// history/: what compaction drops, kept. Each compaction moves the old journal here whole (a hard link taken
// before the new journal is renamed over it), its chain intact, named after its head's sequence number, so
// `session history` and `session get --at` can read every record ever kept. Retention (CRUX_HISTORY_KEEP,
// CRUX_HISTORY_MAX_BYTES) deletes the oldest files at a later compaction; nothing else reads this directory.
//
// Crash safety: until the rename, the link and the journal are one inode, so a crash between the two leaves
// a "history" file that is still the live journal. Such a file (same inode as the journal) is never read as
// history and is replaced by the next compaction; readers also skip any record whose seq they have seen.
import { fs } from '../shared/fs';
import { join } from 'node:path';
import { asStorageError, ensurePrivateDir, fsyncDir } from './durable-fs';
import { crashPoint } from './crash-point';
import { quarantineBytes } from './quarantine';
import { decodeRecord, VERIFY_ALL, type ChainHead, type JournalRecord } from './record';
import { scanJournal, SNAPSHOT_EVENT, type LinePosition, type RecordSink } from './scan';
import type { Reporter } from './reporting';
import { openJournalFile } from './journal-file';

export const HISTORY_DIR = 'history';

export interface HistoryRetention {
  /** History whose newest record is older than this is deleted by a compaction (CRUX_HISTORY_KEEP, 30d). */
  readonly keepMs: number;
  /** Beyond this many bytes of history/, the oldest files are deleted (CRUX_HISTORY_MAX_BYTES, 256 MiB). */
  readonly maxBytes: number;
}

export const DEFAULT_HISTORY_RETENTION: HistoryRetention = { keepMs: 30 * 86_400_000, maxBytes: 256 * 1024 * 1024 };

const stem = (file: string) => file.replace(/\.jsonl$/, '');
const nameFor = (file: string, head: ChainHead) => `${stem(file)}.${String(head.seq).padStart(12, '0')}.jsonl`;

export interface HistoryFile {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
}

/**
 * The history files of journal `file`, oldest first; a crashed link that is still the live journal is left out.
 * No history/ is no history; one that cannot be read (permission denied, I/O) is an error naming it, never
 * "no history" (SPEC §3).
 */
export function listHistory(root: string, file: string): HistoryFile[] {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, HISTORY_DIR));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw asStorageError(error, join(root, HISTORY_DIR));
  }
  const live = inodeOf(join(root, file));
  const pattern = new RegExp(`^${stem(file).replace(/[.]/g, '\\.')}\\.\\d{12}\\.jsonl$`);
  const out: HistoryFile[] = [];
  for (const name of names.filter((n) => pattern.test(n)).sort()) {
    const path = join(root, HISTORY_DIR, name);
    const st = fs.statSync(path, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || (live !== undefined && st.ino === live)) continue;
    out.push({ name: join(HISTORY_DIR, name), path, bytes: st.size });
  }
  return out;
}

function inodeOf(path: string): number | undefined {
  return fs.statSync(path, { throwIfNoEntry: false })?.ino;
}

/**
 * Compaction's hook, under the lock, before the new journal replaces `file`: the old journal (head `head`)
 * becomes a history file. A hard link where the filesystem has them, else a durable copy.
 */
export function archiveJournal(root: string, file: string, head: ChainHead): void {
  const source = join(root, file);
  if (!fs.existsSync(source)) return;
  const dir = join(root, HISTORY_DIR);
  let created = false;
  const target = join(dir, nameFor(file, head));
  try {
    created = ensurePrivateDir(dir);
    // A link left by a crashed compaction (still the live inode, or the same head) is taken again.
    fs.rmSync(target, { force: true });
    for (const stale of fs.readdirSync(dir)) {
      if (inodeOf(join(dir, stale)) === inodeOf(source)) fs.rmSync(join(dir, stale), { force: true });
    }
    try {
      fs.linkSync(source, target);
    } catch (error) {
      if (!['EXDEV', 'EPERM', 'ENOTSUP', 'EMLINK', 'ENOSYS'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      fs.copyFileSync(source, target, fs.constants.COPYFILE_EXCL);
      const fd = fs.openSync(target, 'r+');
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
    fsyncDir(dir);
    crashPoint('history:after-link');
  } catch (error) {
    undo(target, dir, created);
    throw asStorageError(error, dir);
  }
}

function undo(target: string, dir: string, created: boolean): void {
  try {
    fs.rmSync(target, { force: true });
    if (created) fs.rmdirSync(dir);
  } catch {
    // Best effort: what is left is a history file that repeats the journal, which readers pass over.
  }
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

/** The time of a history file's last record (its newest), read from the file's end; 0 when it has none. */
function newestTime(path: string): number {
  const fd = openJournalFile(path);
  try {
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, size - length);
    const text = buf.toString('utf8').trimEnd();
    const line = text.slice(text.lastIndexOf('\n') + 1);
    const ts = /"ts":"([^"]+)"/.exec(line)?.[1];
    const at = ts === undefined ? NaN : Date.parse(ts);
    return Number.isNaN(at) ? 0 : at;
  } finally {
    fs.closeSync(fd);
  }
}

export interface HistoryReport {
  readonly files: number;
  readonly records: number;
  readonly bytes: number;
  readonly problems: { file: string; line: number; reason: string }[];
  /** With --repair: damaged history files moved whole into quarantine/. */
  readonly quarantined?: string[];
}

/**
 * Verifies journal `file`'s history: every line of every file (hash, chain, sequence), and that each file
 * continues the one before it (its opening snapshot names the previous file's head), as the journal must
 * continue the newest. With `repair`, a damaged file moves whole into quarantine/.
 */
export function checkHistory(root: string, file: string, vocabulary: ReadonlySet<string>, opts: { repair: boolean; ts: string }): HistoryReport | undefined {
  const files = listHistory(root, file);
  if (files.length === 0) return undefined;
  const problems: HistoryReport['problems'] = [];
  const damaged: string[] = [];
  let records = 0;
  let bytes = 0;
  let previous: ChainHead | undefined;
  const continues = (name: string, first: JournalRecord | undefined, at: LinePosition | undefined) => {
    if (previous === undefined || first === undefined) return;
    const named = first.ev === SNAPSHOT_EVENT ? first.data?.previous_head : undefined;
    if (named?.seq !== previous.seq || named?.h !== previous.h) {
      problems.push({ file: name, line: at?.line ?? 1, reason: `chain break: does not continue the history before it (head seq ${previous.seq})` });
    }
  };
  for (const h of files) {
    let first: JournalRecord | undefined;
    let firstAt: LinePosition | undefined;
    const scan = scanJournal(h.path, vocabulary, (record, at) => {
      if (first === undefined) [first, firstAt] = [record, at];
    });
    const before = problems.length;
    continues(h.name, first, firstAt);
    for (const p of scan.problems) problems.push({ file: h.name, line: p.line, reason: p.reason });
    if (problems.length > before) damaged.push(h.path);
    records += scan.records;
    bytes += scan.bytes;
    previous = scan.head;
  }
  // The journal itself must continue the newest history file.
  continues(file, firstRecord(join(root, file)), { line: 1, offset: 0, length: 0 });
  const quarantined = opts.repair ? damaged.map((path) => quarantineHistory(root, file, path, opts.ts)) : undefined;
  return { files: files.length, records, bytes, problems, ...(quarantined ? { quarantined } : {}) };
}

/** The journal's first record (its opening snapshot after a compaction), if its first line verifies. */
function firstRecord(path: string): JournalRecord | undefined {
  let fd: number;
  try {
    fd = openJournalFile(path);
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, n).indexOf(10);
    if (nl === -1) return undefined;
    const decoded = decodeRecord(buf.toString('utf8', 0, nl), VERIFY_ALL);
    return decoded.ok ? decoded.record : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function quarantineHistory(root: string, file: string, path: string, ts: string): string {
  const kept = quarantineBytes(root, file, `history-${path.slice(path.lastIndexOf('/') + 1)}`, fs.readFileSync(path), ts);
  fs.rmSync(path);
  fsyncDir(join(root, HISTORY_DIR));
  return kept;
}

/**
 * Every record journal `file` ever kept, oldest first: its history files, then the journal. The records a
 * compaction wrote to restate the live state are passed over when the history before them is at hand (they
 * repeat it); when that history was deleted, they are the oldest versions left. Bad lines are reported.
 */
export function replayHistory(root: string, file: string, vocabulary: ReadonlySet<string>, reporter: Reporter, sink: RecordSink): void {
  const visit = historySink(sink);
  for (const path of [...listHistory(root, file).map((h) => h.path), join(root, file)]) {
    const scan = scanJournal(path, vocabulary, visit);
    const shown = path.startsWith(root) ? path.slice(root.length + 1) : path;
    for (const p of scan.problems) {
      if (!p.skipped) continue;
      reporter.warn(`${shown}:${p.line}: ${p.reason}`);
      reporter.damage?.(shown, p.line, p.reason);
    }
  }
}

/**
 * Passes a journal's records, history first, oldest first, on to `sink` once each, without the records a
 * compaction wrote to restate history that is still at hand (any kind of store reads its history through it).
 */
export function historySink(sink: RecordSink): RecordSink {
  let lastSeq = 0;
  let restating = 0;
  return (record, at) => {
    if (record.seq <= lastSeq) return;
    // The records before this one are at hand: a snapshot after them opens restatements to pass over.
    const covered = lastSeq > 0 && lastSeq === record.seq - 1;
    lastSeq = record.seq;
    if (record.ev === SNAPSHOT_EVENT) {
      const live = record.data?.live_records;
      restating = covered && Number.isSafeInteger(live) ? live : 0;
      return;
    }
    if (restating > 0) {
      restating -= 1;
      return;
    }
    sink(record, at);
  };
}
