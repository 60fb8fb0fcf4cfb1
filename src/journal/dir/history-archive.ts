// Compaction's archive into history/: the old journal becomes a history file before the new journal is renamed
// over it. Whole, as a hard link where the filesystem has them (else a durable copy); or a durable copy without
// what history must not hold: a torn tail (quarantined apart), and the restatements that repeat history already
// kept (policy.ts, planCompaction), so that history keeps each record once. A crash at any step leaves a file the
// readers pass over (history.ts) or none.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { asStorageError, ensurePrivateDir, fsyncDir, ownershipOf, writeNewFileDurable } from '../../shared/durable-fs';
import { crashPoint } from '../../shared/crash-point';
import { HISTORY_DIR, historyFiles, historyName } from './history';
import { openJournalFile } from '../../shared/journal-file';
import type { ChainHead } from '../codec/record';

/** What of the journal to archive: all of it, or its bytes up to `end` (a torn tail left out), without lines [fromLine, toLine] (1-based). */
type ArchiveRange = { readonly leaveOut?: { readonly fromLine: number; readonly toLine: number } | undefined; readonly end: number } | undefined;

/**
 * Compaction's hook, under the lock, before the new journal replaces `file`: the old journal (head `head`)
 * becomes a history file, whole or without the lines `range` leaves out. What a crashed compaction left
 * (history.ts) is taken away first. Returns what takes the history file away again (the rewrite that followed failed).
 */
export function archiveJournal(root: string, file: string, head: ChainHead, range?: ArchiveRange): () => void {
  const source = join(root, file);
  if (!fs.existsSync(source)) return () => {};
  const dir = join(root, HISTORY_DIR);
  let created = false;
  const target = join(dir, historyName(file, head));
  const partial = join(dir, `.${historyName(file, head)}.partial`);
  try {
    created = ensurePrivateDir(dir);
    for (const stale of historyFiles(root, file)) if (stale.leftover) fs.rmSync(stale.path, { force: true });
    // A copy a crash cut short (never read: readers take only whole names) goes too, whatever head it had.
    const stem = historyName(file, { seq: 0 }).replace(/\d{12}\.jsonl$/, '');
    for (const name of fs.readdirSync(dir)) if (name.startsWith(`.${stem}`) && name.endsWith('.partial')) fs.rmSync(join(dir, name), { force: true });
    fs.rmSync(target, { force: true });
    if (range !== undefined) {
      writeNewFileDurable(partial, withoutLines(source, range.leaveOut, range.end), { like: ownershipOf(source) });
      fs.renameSync(partial, target);
    } else linkOrCopy(source, target);
    fsyncDir(dir);
    crashPoint('history:after-link');
  } catch (error) {
    undo([target, partial], dir, created);
    throw asStorageError(error, dir);
  }
  return () => undo([target], dir, created);
}

function linkOrCopy(source: string, target: string): void {
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
}

/** The bytes of `path` up to `end`, without its lines [fromLine, toLine] if given (a verified journal: every line ends in \n). */
function withoutLines(path: string, skip: { fromLine: number; toLine: number } | undefined, end: number): Buffer {
  const fd = openJournalFile(path);
  try {
    const bytes = Buffer.alloc(end);
    for (let done = 0; done < end; ) {
      const n = fs.readSync(fd, bytes, done, end - done, done);
      if (n === 0) throw new Error(`${path} ended at byte ${done} of ${end} while it was archived`);
      done += n;
    }
    if (skip === undefined) return bytes;
    const lineStart = (line: number) => {
      let at = 0;
      for (let l = 1; l < line && at < end; l++) at = bytes.indexOf(10, at) + 1 || end;
      return at;
    };
    const cut = lineStart(skip.fromLine);
    let resume = cut;
    for (let l = skip.fromLine; l <= skip.toLine && resume < end; l++) resume = bytes.indexOf(10, resume) + 1 || end;
    return Buffer.concat([bytes.subarray(0, cut), bytes.subarray(resume)]);
  } finally {
    fs.closeSync(fd);
  }
}

function undo(paths: string[], dir: string, created: boolean): void {
  try {
    for (const path of paths) fs.rmSync(path, { force: true });
    if (created) fs.rmdirSync(dir);
  } catch {
    // Best effort: what is left is a history file that repeats the journal, which readers pass over.
  }
}
