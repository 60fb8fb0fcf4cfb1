// Making a data directory: the directory (and missing parents, 0700) and its lock, as the first write or `crux store
// init` makes them, and a journal filled whole into an empty one (`journal copy --to`); what was made is undone
// when a step fails, as long as nothing else is in it.
import { fs } from '../../shared/fs';
import { dirname, join } from 'node:path';
import { LOCK_DIR } from './lock/lock';
import { adoptOwner, asStorageError, ensurePrivateDir, fsyncDir, pathExists } from '../../shared/durable-fs';
import { QUARANTINE_DIR } from './quarantine';
import { CACHE_DIR } from '../derived';
import type { HistoryPiece, InitReport } from '../core/store-boundary';
import { CruxError } from '../../shared/errors';
import type { HeldLock } from './lock/lock';
import { journalTemp } from './rewrite';
import { writeNewFileFrom } from './line-stream';
import { writeHistoryPieces } from './history-copy';

/** Creates the data directory (and missing parents) and its lock file; returns what it created, outermost first. */
export function createDataDir(root: string): string[] {
  const created = missingDirs(root);
  try {
    ensurePrivateDir(root);
    const lockPath = join(root, LOCK_DIR);
    if (!pathExists(lockPath) && makeDir(lockPath)) {
      adoptOwner(lockPath, root);
      created.push(lockPath);
    }
  } catch (error) {
    removeIfEmpty(created);
    throw asStorageError(error, root);
  }
  return created;
}

/** `crux store init` on a data directory: what it made (with `print`: what it would make, making nothing). */
export function initDataDir(root: string, print: boolean): InitReport {
  const lockPath = join(root, LOCK_DIR);
  const created = !print ? createDataDir(root) : [...missingDirs(root), ...(pathExists(lockPath) ? [] : [lockPath])];
  return { store: root, kind: 'dir', printed: print, created, schema_version: null };
}

/** `root` and its missing parents, outermost first. */
function missingDirs(root: string): string[] {
  const missing: string[] = [];
  for (let dir = root; !pathExists(dir); dir = dirname(dir)) missing.unshift(dir);
  return missing;
}

/** Removes files and directories crux just created, innermost first, as long as nothing else is in them. */
export function removeIfEmpty(created: readonly string[]): void {
  for (const path of [...created].reverse()) {
    try {
      if (fs.statSync(path).isDirectory()) {
        for (const sub of [CACHE_DIR, QUARANTINE_DIR]) {
          try {
            fs.rmdirSync(join(path, sub));
          } catch {
            // Absent, or not empty.
          }
        }
        fs.rmdirSync(path);
      } else if (fs.statSync(path).size === 0) fs.rmSync(path);
    } catch {
      // Not empty (another writer got there), or already gone: leave it.
    }
  }
}

/** Makes a directory (0700); false when another process made it first (two first writes at once). */
function makeDir(path: string): boolean {
  try {
    fs.mkdirSync(path, { mode: 0o700 });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Into a data directory where journal `file` is empty or absent: `lines` as that journal, all at once, and its
 * history pieces; refused (4) when the journal has records. A directory made for it goes again on failure.
 */
export async function restoreJournal(
  root: string,
  lock: () => Promise<HeldLock>,
  file: string,
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  history: readonly HistoryPiece[],
): Promise<void> {
  const source = (Symbol.asyncIterator in lines ? lines[Symbol.asyncIterator]() : lines[Symbol.iterator]()) as AsyncIterator<Uint8Array> | Iterator<Uint8Array>;
  const first = await source.next();
  if (first.done) return;
  async function* all(): AsyncIterable<Uint8Array> {
    yield first.value;
    for (let next = await source.next(); !next.done; next = await source.next()) yield next.value;
  }
  const created = pathExists(root) ? [] : createDataDir(root);
  try {
    const held = await lock();
    try {
      if (journalSize(join(root, file)) > 0) throw new CruxError('conflict', `${join(root, file)} already has records`, 'copy into an empty store');
      // The journal is streamed into a temp file (a chunk at a time), its history written, and then it appears whole.
      const temp = journalTemp(root, file);
      fs.rmSync(temp, { force: true });
      try {
        await writeNewFileFrom(temp, all());
        await writeHistoryPieces(root, history);
        fs.renameSync(temp, join(root, file));
        fsyncDir(root);
      } catch (error) {
        fs.rmSync(temp, { force: true });
        throw asStorageError(error, join(root, file));
      }
    } finally {
      await held.release();
    }
  } catch (error) {
    removeIfEmpty(created);
    throw error;
  }
}

function journalSize(path: string): number {
  try {
    return fs.statSync(path).size;
  } catch {
    return 0;
  }
}
