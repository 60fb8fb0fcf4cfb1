// File facts for `crux doctor`: what is on disk, read without changing anything and without waiting.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { acquireLock, LOCK_DIR, lockDir, lockMechanism, LockTimeout, type HeldLock, type LockHolder } from './lock/lock';
import { HISTORY_DIR } from './history';
import { QUARANTINE_DIR } from './quarantine';
import { CACHE_DIR, derivedFiles, replayUpkeep } from '../derived';
import { KEYS_DIR } from './key-files';
import { surveyJournal } from '../core/check';
import type { LockedLines } from '../core/line-store';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalFacts, StoreFacts } from '../core/store-boundary';
import { listQuarantine } from './quarantine';
import { asStorageError } from '../../shared/durable-fs';

/** Whether `path` exists, what it is, its size and its permission bits (e.g. 0o600). */
function fileFacts(path: string) {
  let st: import('node:fs').Stats;
  try {
    st = fs.statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { exists: false, kind: null, bytes: 0, mode: null };
    throw asStorageError(error, path);
  }
  const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  return { exists: true, kind, bytes: st.size, mode: st.mode & 0o777 };
}

const holderOf = (h: LockHolder | undefined) => (h === undefined ? null : { pid: h.pid, command: h.command, host: h.host });

/** Tries to take the lock without waiting. Free: we now hold it (release `ours`). Held: who holds it. */
async function probeLock(root: string): Promise<{ lock: StoreFacts['lock']; ours?: HeldLock }> {
  const { addressing, filesystem } = lockMechanism(root);
  const lock = (held: boolean, holder: LockHolder | undefined, stale: boolean | null) => ({
    held,
    name: lockDir(root),
    holder: holderOf(holder),
    stale,
    mechanism: `socket+link (${addressing})`,
    filesystem,
  });
  try {
    const ours = await acquireLock(root, 0);
    // A killed holder's lock is recovered by taking it, as any writer would: doctor names whose it was.
    return { lock: lock(false, ours.recovered, ours.recovered !== undefined), ours };
  } catch (error) {
    // Held: by whom, and whether its holder is provably alive. Not probed at all (a directory crux may not write): free.
    return error instanceof LockTimeout ? { lock: lock(true, error.holder, error.provable ? false : null) } : { lock: lock(false, undefined, false) };
  }
}

/**
 * Doctor's facts of the data directory `dir` (its journals read through `lines`): surveyed under the lock when
 * it is free, so that the journals hold still; without it when a writer holds it.
 */
export async function surveyStore(dir: string, lines: LockedLines, specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
  const root = fileFacts(dir);
  const usable = root.exists && root.kind === 'directory';
  const probe = usable ? await probeLock(dir) : { lock: { held: false, name: null, holder: null, stale: false }, ours: undefined };
  let journals: JournalFacts<any>[];
  try {
    journals = [];
    for (const spec of usable ? specs : []) {
      const upkeep = spec.liveBytes === undefined ? replayUpkeep(spec) : undefined;
      const facts = await surveyJournal(lines.journal(spec.file), spec, () => lines.quarantined(spec.file), upkeep);
      const index = spec.keyOf !== undefined && facts.exists ? derivedFiles(dir, spec).describeIndex() : null;
      journals.push({ ...facts, index });
    }
  } finally {
    await probe.ours?.release();
  }
  return {
    location: { path: dir, exists: root.exists, usable, mode: root.mode },
    lock: probe.lock,
    journals,
    quarantine: usable ? listQuarantine(dir) : [],
    ...(usable ? historyUnreadable(dir) : {}),
    other_files: usable
      ? strayFiles(
          dir,
          specs.map((s) => s.file),
        )
      : [],
  };
}

/** history/ that exists but cannot be read: what session history, get --at, check and compact will refuse with (5). */
function historyUnreadable(root: string): { history_unreadable?: string } {
  try {
    fs.readdirSync(join(root, HISTORY_DIR));
    return {};
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? {} : { history_unreadable: `${join(root, HISTORY_DIR)} cannot be read (${code ?? String(error)})` };
  }
}

/** Files in the data directory that no store declares (besides the lock, keys, quarantine and the key-index cache). */
function strayFiles(root: string, known: readonly string[]): string[] {
  try {
    return fs
      .readdirSync(root)
      .filter((n) => !known.includes(n) && ![LOCK_DIR, KEYS_DIR, QUARANTINE_DIR, CACHE_DIR, HISTORY_DIR].includes(n))
      .sort();
  } catch {
    return [];
  }
}
