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

/** What a survey reads of a data directory: its root, and its journals as lines (data-dir.ts). */
export interface SurveyedDir {
  readonly root: string;
  readonly lines: LockedLines;
}

export interface FileFacts {
  readonly exists: boolean;
  readonly kind: 'file' | 'directory' | 'other' | null;
  readonly bytes: number;
  /** Permission bits, e.g. 0o600. */
  readonly mode: number | null;
}

function fileFacts(path: string): FileFacts {
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

export interface LockProbe {
  /** Whether another process holds the writers' lock right now. */
  readonly held: boolean;
  /** The lock directory. */
  readonly name: string | null;
  /** The holding process, as its holder file names it. */
  readonly holder: { pid: number; command: string; host: string } | null;
  /** A killed holder's lock was found (and taken over); null: cannot be told apart from a live one here. */
  readonly stale: boolean | null;
  readonly mechanism?: string;
  readonly filesystem?: { type: string; trusted: boolean };
  /** Why the lock could not be probed (a directory crux may not write, say). */
  readonly error?: string;
  /** Ours while the survey runs when the lock was free: release it when done. */
  readonly ours?: HeldLock;
}

const holderOf = (h: LockHolder | undefined) => (h === undefined ? null : { pid: h.pid, command: h.command, host: h.host });

/** Tries to take the lock without waiting. Free: we now hold it (release `ours`). Held: who holds it. */
async function probeLock(root: string): Promise<LockProbe> {
  const { addressing, filesystem } = lockMechanism(root);
  const facts = { name: lockDir(root), mechanism: `socket+link (${addressing})`, filesystem };
  try {
    const ours = await acquireLock(root, 0);
    // A killed holder's lock is recovered by taking it, as any writer would: doctor names whose it was.
    return { ...facts, held: false, holder: holderOf(ours.recovered), stale: ours.recovered !== undefined, ours };
  } catch (error) {
    if (error instanceof LockTimeout) return { ...facts, held: true, holder: holderOf(error.holder), stale: error.provable ? false : null };
    return { ...facts, held: false, holder: null, stale: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Doctor's facts of a data directory: surveyed under the lock when it is free, so that the journals hold
 * still; without it when a writer holds it.
 */
export async function surveyStore(dir: SurveyedDir, specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
  const root = fileFacts(dir.root);
  const usable = root.exists && root.kind === 'directory';
  const probe: LockProbe = usable ? await probeLock(dir.root) : { held: false, name: null, holder: null, stale: false };
  let journals: JournalFacts<any>[];
  try {
    journals = [];
    for (const spec of usable ? specs : []) {
      const facts = await surveyJournal(
        dir.lines.journal(spec.file),
        spec,
        () => dir.lines.quarantined(spec.file),
        spec.liveBytes === undefined ? replayUpkeep(spec) : undefined,
      );
      const index = spec.keyOf !== undefined && facts.exists ? derivedFiles(dir.root, spec).describeIndex() : null;
      journals.push({ ...facts, index });
    }
  } finally {
    await probe.ours?.release();
  }
  return {
    location: { path: dir.root, exists: root.exists, usable, mode: root.mode },
    lock: {
      held: probe.held,
      name: probe.name,
      holder: probe.holder,
      stale: probe.stale,
      ...(probe.mechanism ? { mechanism: probe.mechanism } : {}),
      ...(probe.filesystem ? { filesystem: probe.filesystem } : {}),
    },
    journals,
    quarantine: usable ? listQuarantine(dir.root) : [],
    ...(usable ? historyUnreadable(dir.root) : {}),
    other_files: usable
      ? strayFiles(
          dir.root,
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
