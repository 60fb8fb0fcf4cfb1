// File facts for `crux doctor`: what is on disk, read without changing anything and without waiting.
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { acquireLock, lockName, lockPlatformSupported, type HeldLock } from './lock';
import { QUARANTINE_DIR } from './quarantine';
import { CACHE_DIR, indexPath, openIndex, statJournal } from './key-index';
import { KEYS_DIR } from './keys';
import { LOCK_FILE, reportScan } from './data-dir';
import type { DataDir } from './data-dir';
import type { JournalRecord } from './record';
import type { StoreSpec } from './store-spec';
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

/** The bytes of a small private file (a key), or undefined when it cannot be read. */
export function readSmallFile(path: string, maxBytes = 4096): Buffer | undefined {
  try {
    if (fs.statSync(path).size > maxBytes) return undefined;
    return fs.readFileSync(path);
  } catch {
    return undefined;
  }
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

export interface JournalFacts<S> {
  readonly name: string;
  readonly file: string;
  readonly exists: boolean;
  readonly bytes: number;
  readonly records: number;
  readonly problems: { line: number; reason: string }[];
  readonly torn_tail: boolean;
  readonly quarantined: number;
  readonly replay_ms: number;
  /** The time of the newest record, and of the last record in the file (they differ when time went backwards). */
  readonly newest_ts: string | null;
  readonly last_ts: string | null;
  /** Records whose time is earlier than the record before them: the writers' clocks (or CRUX_NOW) disagree. */
  readonly backwards: { count: number; first_line: number | null };
  /** The folded state, for the store's own health questions. */
  readonly state: S;
  /** The store's estimate of the bytes its live state needs (or the key index's), when there is one. */
  readonly live_bytes: number | null;
  /**
   * The key index (cache/<file>.idx), a derived cache that must advance with the journal: valid (describes the
   * journal as it is), stale (the next write rebuilds it; until then reads replay the whole journal), wrong
   * (describes this very file but another chain head: a bug), absent, or null for a store without one.
   */
  readonly index: 'valid' | 'stale' | 'wrong' | 'absent' | null;
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
  const stat = statJournal(dir.path(spec.file));
  const opened = spec.keyOf !== undefined && stat !== undefined ? openIndex(dir.root, spec.file, stat) : undefined;
  let index: JournalFacts<S>['index'] = null;
  if (spec.keyOf !== undefined && scan.exists) {
    if (opened === undefined) index = fs.existsSync(indexPath(dir.root, spec.file)) ? 'stale' : 'absent';
    else index = opened.header.h === scan.head.h && opened.header.seq === scan.head.seq ? 'valid' : 'wrong';
  }
  return {
    ...reportScan(dir.root, spec.file, scan),
    newest_ts: newest,
    last_ts: last,
    backwards,
    state: loaded.state,
    live_bytes: spec.liveBytes?.(loaded.state) ?? opened?.header.live ?? null,
    index,
  };
}

/** Files in the data directory that no store declares (besides the lock, keys, quarantine and the key-index cache). */
export function strayFiles(root: string, known: readonly string[]): string[] {
  try {
    return fs
      .readdirSync(root)
      .filter((n) => !known.includes(n) && ![LOCK_FILE, KEYS_DIR, QUARANTINE_DIR, CACHE_DIR].includes(n))
      .sort();
  } catch {
    return [];
  }
}
