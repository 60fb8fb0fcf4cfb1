// `journal compact` (and the automatic compaction after a write): a journal rewritten to its live records,
// after a snapshot record that continues the old chain; the old journal goes to history/, each record kept once,
// and a journal with nothing dead is left as it is (SPEC §3; the rules in policy.ts, planCompaction).
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { compactionText, planCompaction } from '../core/policy';
import { replaceJournal, sweepStrayTemps } from './rewrite';
import { quarantineBytes } from './quarantine';
import { firstRecord, HISTORY_DIR, historyHead, pruneHistory, type HistoryRetention } from './history';
import { archiveJournal } from './history-archive';
import type { Loaded, Reporter } from './load';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { CompactReport } from '../core/store-boundary';
import { CruxError } from '../../shared/errors';
import { noteCommit } from '../../shared/commit-log';
import { openJournalFile } from '../../shared/journal-file';

/** What check and compaction need of a data directory. */
export interface JournalDir {
  readonly root: string;
  readonly reporter: Reporter;
  readonly historyRetention: HistoryRetention;
  path(file: string): string;
  /** Rebuilds the derived files (index, snapshot) of a journal just rewritten, from a replay of it. */
  reindex(spec: StoreSpec<any>): void;
}

/** Rewrites one journal (replayed whole as `loaded`, under the lock) to its live records. */
export function compactJournal<S>(dir: JournalDir, spec: StoreSpec<S>, loaded: Loaded<S>, ts: string): CompactReport {
  const name = journalName(spec.file);
  const before = { records: loaded.records, bytes: loaded.bytes };
  if (loaded.bytes === 0 && loaded.lines === 0) return { name, file: spec.file, before, after: before };
  if (loaded.damaged) {
    throw new CruxError(
      'journal_damaged',
      `${spec.file} has damaged lines; compaction would drop them`,
      'run `crux journal check --repair` first: it keeps them in quarantine/',
    );
  }
  sweepStrayTemps(dir.root, spec.file, ts);
  const live = spec.live(loaded.state);
  const first = firstRecord(dir.path(spec.file));
  const plan = planCompaction({ records: loaded.records, first, tornTail: loaded.tornTail !== undefined }, live.length, historyHead(dir.root, spec.file));
  if (!plan.rewrite) {
    // Nothing to rewrite; retention still applies, as after any compaction.
    pruneHistory(dir.root, dir.historyRetention, Date.parse(ts));
    return { name, file: spec.file, before, after: before };
  }
  if (loaded.tornTail !== undefined) {
    const tail = readRange(dir.path(spec.file), loaded.tornTail.offset, loaded.tornTail.length);
    quarantineBytes(dir.root, spec.file, `tail-at-${loaded.tornTail.offset}`, tail, ts);
  }
  const text = compactionText(loaded.head, before, live, ts);
  const history = join(dir.root, HISTORY_DIR);
  const previous = historyNames(history);
  // The restatements to leave out are the lines after the opening snapshot (line 1, seq first.seq); a torn tail
  // is quarantined, not history.
  const leaveOut = plan.leaveOut && first ? { fromLine: plan.leaveOut.from - first.seq + 1, toLine: plan.leaveOut.to - first.seq + 1 } : undefined;
  const range = leaveOut !== undefined || loaded.tornTail !== undefined ? { leaveOut, end: loaded.tornTail?.offset ?? loaded.bytes } : undefined;
  archiveJournal(dir.root, spec.file, loaded.head, range);
  let bytes: number;
  try {
    bytes = replaceJournal(dir.root, spec.file, text);
  } catch (error) {
    // The rewrite failed (a full disk): the compaction changes nothing, so the history link it just made goes too.
    undoArchive(history, previous);
    throw error;
  }
  noteCommit(`${spec.file} compacted`);
  pruneHistory(dir.root, dir.historyRetention, Date.parse(ts));
  dir.reindex(spec);
  return { name, file: spec.file, before, after: { records: live.length + 1, bytes } };
}

function historyNames(history: string): Set<string> | undefined {
  try {
    return new Set(fs.readdirSync(history));
  } catch {
    return undefined;
  }
}

function undoArchive(history: string, before: Set<string> | undefined): void {
  try {
    for (const name of fs.readdirSync(history)) if (!before?.has(name)) fs.rmSync(join(history, name), { force: true });
    if (before === undefined) fs.rmdirSync(history);
  } catch {
    // Best effort: a history file left behind is verified by check and pruned by retention.
  }
}

function readRange(path: string, offset: number, length: number): Buffer {
  const fd = openJournalFile(path);
  try {
    const buf = Buffer.alloc(length);
    fs.readSync(fd, buf, 0, length, offset);
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}
