// File facts for `crux doctor`: what is on disk, read without changing anything and without waiting.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { acquireLock, lockName, lockPlatformSupported, type HeldLock } from './lock';
import { HISTORY_DIR } from './history';
import { QUARANTINE_DIR } from './quarantine';
import { CACHE_DIR, describeIndex } from './derived';
import { KEYS_DIR } from './keys';
import { LOCK_FILE, reportScan } from './data-dir';
import type { DataDir } from './data-dir';
import type { JournalRecord } from './record';
import type { StoreSpec } from './store-spec';
import type { JournalFacts, StoreFacts } from './store-boundary';
import { listQuarantine } from './quarantine';
import { CruxError } from '../shared/errors';

export interface FileFacts {
  readonly exists: boolean;
  readonly kind: 'file' | 'directory' | 'other' | null;
  readonly bytes: number;
  /** Permission bits, e.g. 0o600. */
  readonly mode: number | null;
}

export function fileFacts(path: string): FileFacts {
  let st: import('node:fs').Stats;
  try {
    st = fs.statSync(path);
  } catch {
    return { exists: false, kind: null, bytes: 0, mode: null };
  }
  const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
  return { exists: true, kind, bytes: st.size, mode: st.mode & 0o777 };
}

export interface LockProbe {
  /** Whether another process holds the writers' lock right now. */
  readonly held: boolean;
  /** The abstract socket name, as `ss -xl` prints it (with a leading @). */
  readonly name: string | null;
  /** The holding process, when /proc lets us see it (same user). */
  readonly holder: { pid: number; command: string } | null;
  /** Ours while the survey runs when the lock was free: release it when done. */
  readonly ours?: HeldLock;
}

/** Tries to take the lock without waiting. Free: we now hold it (release `ours`). Held: who holds it. */
export async function probeLock(root: string): Promise<LockProbe> {
  if (!lockPlatformSupported()) return { held: false, name: null, holder: null };
  const name = lockName(root);
  const shown = `@${name.slice(1)}`;
  try {
    const ours = await acquireLock(root, 0);
    return { held: false, name: shown, holder: null, ours };
  } catch (error) {
    if (!(error instanceof CruxError) || error.kind !== 'lock_timeout') throw error;
    return { held: true, name: shown, holder: findSocketHolder(shown) };
  }
}

/** Best effort: the process listening on an abstract socket, via /proc/net/unix and /proc/<pid>/fd. */
function findSocketHolder(shownName: string): { pid: number; command: string } | null {
  try {
    // Columns: Num RefCount Protocol Flags Type St Inode Path. Node pads an abstract name with NULs, shown as @.
    const fields = fs
      .readFileSync('/proc/net/unix', 'utf8')
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .find((f) => f[7] !== undefined && f[7].startsWith(shownName) && /^@*$/.test(f[7].slice(shownName.length)));
    const inode = fields?.[6];
    if (inode === undefined) return null;
    const target = `socket:[${inode}]`;
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      let fds: string[];
      try {
        fds = fs.readdirSync(`/proc/${entry}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let link: string;
        try {
          link = fs.readlinkSync(`/proc/${entry}/fd/${fd}`);
        } catch {
          continue;
        }
        if (link !== target) continue;
        const command = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
        return { pid: Number(entry), command };
      }
    }
  } catch {
    // /proc unreadable: the holder stays unnamed.
  }
  return null;
}

/**
 * Doctor's facts of a data directory: surveyed under the lock when it is free, so that the journals hold
 * still; without it when a writer holds it.
 */
export async function surveyStore(dir: DataDir, specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
  const root = fileFacts(dir.root);
  const usable = root.exists && root.kind === 'directory';
  const probe = usable ? await probeLock(dir.root) : { held: false, name: null, holder: null };
  let journals: JournalFacts<any>[];
  try {
    journals = usable ? specs.map((spec) => surveyJournal(dir, spec)) : [];
  } finally {
    await probe.ours?.release();
  }
  return {
    location: { path: dir.root, exists: root.exists, usable, mode: root.mode },
    lock: { held: probe.held, name: probe.name, holder: probe.holder },
    journals,
    quarantine: usable ? listQuarantine(dir.root) : [],
    other_files: usable ? strayFiles(dir.root, specs.map((s) => s.file)) : [],
  };
}

/**
 * Replays one journal (quietly: problems are returned, not printed) and notes what the fold alone does not
 * tell: the time of the newest record and whether record times advance.
 */
export function surveyJournal<S>(dir: DataDir, spec: StoreSpec<S>): JournalFacts<S> {
  let newest: string | null = null;
  let last: string | null = null;
  let lastMs = -Infinity;
  const backwards = { count: 0, first_line: null as number | null };
  const watched: StoreSpec<S> = {
    ...spec,
    evolve(state, record: JournalRecord, at) {
      const ms = Date.parse(record.ts);
      if (Number.isFinite(ms)) {
        if (ms < lastMs) {
          backwards.count += 1;
          backwards.first_line ??= at.line;
        }
        lastMs = Math.max(lastMs, ms);
        if (newest === null || ms > Date.parse(newest)) newest = record.ts;
      }
      last = record.ts;
      spec.evolve(state, record, at);
    },
  };
  const loaded = dir.replay(watched, { quiet: true });
  const { scan } = loaded;
  let index: JournalFacts<S>['index'] = null;
  if (spec.keyOf !== undefined && scan.exists) index = describeIndex(dir.root, spec, dir.path(spec.file));
  return {
    ...reportScan(dir.root, spec.file, scan),
    newest_ts: newest,
    last_ts: last,
    backwards,
    state: loaded.state,
    live_bytes: spec.liveBytes?.(loaded.state) ?? loaded.index?.estimate.total ?? null,
    index,
  };
}

/** Files in the data directory that no store declares (besides the lock, keys, quarantine and the key-index cache). */
export function strayFiles(root: string, known: readonly string[]): string[] {
  try {
    return fs
      .readdirSync(root)
      .filter((n) => !known.includes(n) && ![LOCK_FILE, KEYS_DIR, QUARANTINE_DIR, CACHE_DIR, HISTORY_DIR].includes(n))
      .sort();
  } catch {
    return [];
  }
}
