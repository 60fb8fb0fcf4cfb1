// A data directory as the line store under the whole-journal operations (core/line-store.ts): journals and
// history/ files read by scan.ts, a journal replaced by rewrite.ts after its old file became a history file
// (history-archive.ts), quarantine/ for what is taken out. The caller holds the lock (data-dir.ts).
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { fsyncDir } from '../../shared/durable-fs';
import { noteCommit } from '../../shared/commit-log';
import { CruxError } from '../../shared/errors';
import { openJournalFile } from '../../shared/journal-file';
import { scanJournal, withTotal, type LinePosition, type ScanResult } from '../codec/scan';
import type { JournalRecord } from '../codec/record';
import type { Loaded, Reporter } from '../codec/loaded';
import type { StoreSpec } from '../codec/store-spec';
import type { ProgressSink } from '../codec/reporting';
import type { HistoryRetention } from '../core/history';
import type { ArchivePlan, HistoryGeneration, LinesProblem, ScanOptions, LinesSource, LockedLines, QuarantineItem, StagedRewrite } from '../core/line-store';
import { firstRecord, HISTORY_DIR, historyHead, listHistory, pruneHistory } from './history';
import { archiveJournal } from './history-archive';
import { listQuarantine, QUARANTINE_DIR, quarantineBytes } from './quarantine';
import { DirRewriteSet } from './rewrite-set';

export { finishRewrite } from './rewrite-set';
import { replaceJournal, sweepStrayTemps } from './rewrite';

/** What the line store needs of its data directory (data-dir.ts). */
export interface LinesDir {
  readonly root: string;
  readonly reporter: Reporter;
  readonly historyRetention: HistoryRetention;
  path(file: string): string;
  replay<S>(spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink | undefined }): Loaded<S> & { scan: ScanResult };
  /** Rebuilds the derived files (index, snapshot) of a journal just rewritten, from a replay of it. */
  reindex(spec: StoreSpec<any>): void;
}

/** A file of the data directory (a journal, a history file) as lines to verify; `where` names it under the root. */
function fileSource(path: string, where: string, file: string): LinesSource {
  return {
    where,
    async scan<T>(vocabulary: ReadonlySet<string>, sink: ((item: T, at: LinePosition) => void) | undefined, opts: ScanOptions<T> = {}) {
      const progress = opts.progress === undefined ? undefined : withTotal(opts.progress, file, path);
      const see = opts.see;
      if (sink !== undefined) {
        // What the verifier holds of a batch's records until it is whole: the record itself unless the caller keeps less.
        const kept = opts.keep ?? ((record: JournalRecord) => record as unknown as T);
        const keep = see === undefined ? kept : (record: JournalRecord, at: LinePosition) => (see(record, at), kept(record, at));
        return scanJournal<T>(path, vocabulary, (item, at) => (progress?.(at), sink(item, at)), undefined, { history: opts.history ?? false, keep });
      }
      const keep = see === undefined ? () => 0 as const : (record: JournalRecord, at: LinePosition) => (see(record, at), 0 as const);
      return scanJournal(path, vocabulary, (_: 0, at) => progress?.(at), undefined, { history: opts.history ?? false, keep });
    },
  };
}

export class DirLines implements LockedLines {
  constructor(private readonly dir: LinesDir) {}

  journal(file: string): LinesSource {
    return fileSource(this.dir.path(file), file, file);
  }

  async history(file: string): Promise<HistoryGeneration[]> {
    const root = this.dir.root;
    return listHistory(root, file).map((h) => ({
      ...fileSource(h.path, h.name, file),
      id: h.path,
      async quarantine(ts: string) {
        const kept = quarantineBytes(root, file, `history-${h.path.slice(h.path.lastIndexOf('/') + 1)}`, fs.readFileSync(h.path), ts);
        fs.rmSync(h.path);
        fsyncDir(join(root, HISTORY_DIR));
        return kept;
      },
    }));
  }

  passedOver(_file: string, where: string, p: LinesProblem): void {
    this.dir.reporter.warn(`${where}:${p.line}: ${p.reason}`);
    this.dir.reporter.damage?.(where, p.line, p.reason);
  }

  async fold<S>(spec: StoreSpec<S>, progress?: ProgressSink): Promise<Loaded<S>> {
    return this.dir.replay(spec, { quiet: true, progress });
  }

  async first(file: string): Promise<JournalRecord | undefined> {
    return firstRecord(this.dir.path(file));
  }

  async historyHead(file: string): Promise<number | undefined> {
    return historyHead(this.dir.root, file);
  }

  async bytes(file: string, range?: { offset: number; length: number }): Promise<Buffer> {
    const path = this.dir.path(file);
    if (range === undefined) return fs.readFileSync(path);
    const fd = openJournalFile(path);
    try {
      const buf = Buffer.alloc(range.length);
      fs.readSync(fd, buf, 0, range.length, range.offset);
      return buf;
    } finally {
      fs.closeSync(fd);
    }
  }

  async quarantine(file: string, label: string, bytes: Uint8Array | string, ts: string): Promise<string> {
    return quarantineBytes(this.dir.root, file, label, bytes, ts);
  }

  async quarantined(file: string): Promise<number> {
    return listQuarantine(this.dir.root, file).length;
  }

  async quarantineItems(): Promise<QuarantineItem[]> {
    const root = this.dir.root;
    return listQuarantine(root)
      .filter((n) => !n.startsWith('.'))
      .map((n) => {
        const name = join(QUARANTINE_DIR, n);
        return { name, read: async () => fs.readFileSync(join(root, name)) };
      });
  }

  async stage(): Promise<StagedRewrite> {
    return DirRewriteSet.begin(this.dir.root);
  }

  /**
   * The old journal becomes a history file first (history-archive.ts), then the new one is renamed over it
   * (rewrite.ts): a crash between the two leaves a history file the readers pass over (it repeats the journal).
   */
  async replace(spec: StoreSpec<unknown>, text: string, opts: { archive?: ArchivePlan; note: string }): Promise<number> {
    const { root } = this.dir;
    const archive = opts.archive;
    let undo: (() => void) | undefined;
    if (archive !== undefined) {
      const { leaveOut, firstSeq } = archive;
      const lines = leaveOut === undefined ? undefined : { fromLine: leaveOut.from - firstSeq + 1, toLine: leaveOut.to - firstSeq + 1 };
      undo = archiveJournal(root, spec.file, archive.head, archive.whole ? undefined : { leaveOut: lines, end: archive.end });
    }
    let bytes: number;
    try {
      bytes = replaceJournal(root, spec.file, text);
    } catch (error) {
      // The rewrite failed (a full disk): it changes nothing, so the history file it just made goes too.
      undo?.();
      throw error;
    }
    noteCommit(`${spec.file} ${opts.note}`);
    return bytes;
  }

  async rewritten<S>(spec: StoreSpec<S>): Promise<void> {
    this.dir.reindex(spec);
  }

  async pruneHistory(ts: string, drop: boolean): Promise<void> {
    pruneHistory(this.dir.root, this.dir.historyRetention, Date.parse(ts), drop);
  }

  damaged(file: string, doing: string): Error {
    return new CruxError(
      'journal_damaged',
      `${file} has damaged lines; ${doing} would drop them`,
      'run `crux journal check --repair` first: it keeps them in quarantine/',
    );
  }

  async sweep(file: string, ts: string): Promise<void> {
    sweepStrayTemps(this.dir.root, file, ts);
  }
}
