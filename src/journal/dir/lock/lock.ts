// The writers' lock: one per data directory, excluding every writer wherever it runs (SPEC §3).
// (Over 300 lines: the protocol — take, wait, hand over, recover — reads as one; its files, sockets and sweep
// are modules of their own.)
//
// Files in <data dir>/.lock/ (they are filesystem objects, so network and PID namespaces, symlinks and bind
// mounts all see the same ones; lock-files.ts reads them):
//   s.<id>  a contender's listening Unix socket (lock-socket.ts): it accepts while its process lives; once the
//           process has died the kernel refuses every connection to it (ECONNREFUSED), which proves the death;
//   i.<id>  its holder file (pid, command, host, time, socket name), written after the socket listens;
//   g.<n>   generation n: a hard link to the holder file of whoever took the lock the n-th time.
// A contender binds its socket, writes its holder file, reads the highest generation m, and when m's socket is
// gone (a release) or refuses (a death) — or there is no generation — link()s its holder file to g.<m+1>.
// link() is atomic and fails when the name exists, so one contender wins each generation. It then lists the
// directory again: a higher generation means it linked a name that had been cleaned up, late; it removes its
// link and starts over. The holder removes the generations below its own. Release closes the socket and
// removes the holder file but leaves g.<n>, so the highest generation is only ever replaced by a higher one.
// Why no two hold at once: the first generation above a holder's q is linked by someone who read q as the
// highest and probed q's socket, which listens from before g.<q> is linked until the holder releases or dies.
// crux-journal(5) gives the argument in full. Nothing is broken by age: no clock, no timeout, no stale guess.
//
// Waiters sleep: each keeps its probe connection to the holder open, and the kernel closes it when the holder
// releases or dies, which wakes it; no timer polls meanwhile (only the deadline, and a back-off where nothing
// can be waited on: an untrusted filesystem, an unreadable holder file). Each release sweeps a few of the files
// dead contenders left (lock-sweep.ts).
import { fs } from '../../../shared/fs';
// node:os on first use, for the boot time: loading it costs every command ~0.9 M instructions.
const os = (): typeof import('node:os') => require('node:os');
import { join } from 'node:path';
import { CruxError } from '../../../shared/errors';
import { asStorageError } from '../../../shared/durable-fs';
import { holdLockForTest, traceLock, traceWait } from '../../../shared/crash-point';
import { chooseAddressing, lockFilesystem, socketAddress, warnOnce, type Addressing, type LockFilesystem } from './lock-fs';
import { ensureLockDir, generations, generationsIn, holderByInode, hostname, LOCK_DIR, lockDir, readHolder, unlinkQuiet } from './lock-files';
import { ahead, hasQueue, joinQueue } from './lock-queue';
import { Contender, probe, Swept } from './lock-socket';
import { destroyLingering, type Wake } from './lock-pipe';
import { sweep } from './lock-sweep';

export { LOCK_DIR, lockDir };
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/** Who holds (or held) a generation, as its holder file says. */
export interface LockHolder {
  readonly pid: number;
  readonly command: string;
  readonly host: string;
  readonly since: string;
  /** The generation: the lock directory's g.<n>. */
  readonly generation: number;
}

export interface HeldLock {
  readonly generation: number;
  readonly filesystem: LockFilesystem;
  readonly addressing: Addressing;
  /** The killed holder whose lock this one took over (its files are cleaned up). */
  readonly recovered?: LockHolder;
  /** Frees the lock. `dropDir`: also remove the lock directory when nothing but this holder's files is in it. */
  release(opts?: { dropDir?: boolean }): Promise<void>;
}

export interface LockOptions {
  /** Told once per data directory, at its first write, when the lock cannot be trusted on its filesystem. */
  readonly warn?: (message: string) => void;
}

type Verdict =
  | { state: 'free'; holder?: undefined }
  | { state: 'dead'; holder?: LockHolder; socket?: string }
  | { state: 'mine'; holder?: undefined }
  | { state: 'alive'; holder?: LockHolder; conn?: Wake }
  /** Cannot be proved dead: a refusal on an untrusted filesystem, or a holder file that cannot be read. */
  | { state: 'unknown'; holder?: LockHolder; why: string };

/** `pid 1234 (crux session put a …)`, and the host when it is another: for messages and doctor. */
function describeHolder(holder: Pick<LockHolder, 'pid' | 'command' | 'host'>): string {
  const visible = holder.command.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  const short = visible.length > 60 ? `${visible.slice(0, 59)}…` : visible;
  return `pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}${short ? ` (${short})` : ''}`;
}

const bootTime = () => Date.now() - os().uptime() * 1000;

/** Decides about the highest generation: may we take the next one? */
async function judge(contender: Contender, generation: number, filesystem: LockFilesystem): Promise<Verdict> {
  const path = join(contender.dir, `g.${generation}`);
  const file = readHolder(path) ?? holderByInode(contender.dir, path);
  if (file === undefined) {
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(path).mtimeMs;
    } catch {
      return { state: 'unknown', why: 'it changed while being read' };
    }
    // Holder files are whole before they are linked; an unreadable one was written before the last boot
    // (a power cut kept the name but not the bytes), when every holder of this kernel died.
    if (mtimeMs < bootTime() && filesystem.trusted) return { state: 'dead' };
    return { state: 'unknown', why: `its holder file ${path} cannot be read` };
  }
  if (file.socket === contender.socket) return { state: 'mine' };
  const holder: LockHolder = { pid: file.pid, command: String(file.command), host: String(file.host), since: String(file.since), generation };
  const seen = await probe(contender.address, file.socket);
  if (seen.answer === 'alive') return { state: 'alive', holder, conn: seen.conn };
  if (seen.answer === 'gone' || filesystem.trusted) return { state: 'dead', holder: seen.answer === 'refused' ? holder : undefined, socket: file.socket };
  return { state: 'unknown', holder, why: `on ${filesystem.type} a refused connection does not prove the holder dead` };
}

/**
 * Waits for the holder to leave: until the probe connection to it ends (the holder ends it at release, the kernel
 * at its death) or `until`, whichever comes first. Without a connection to wait on, sleeps `backOff` ms.
 */
function waitForHolder(conn: Wake | undefined, until: number, backOff: number): Promise<void> {
  return new Promise((resolve) => {
    let woken = false;
    const done = () => {
      if (woken) return;
      woken = true;
      clearTimeout(timer);
      conn?.linger();
      resolve();
    };
    const timer = setTimeout(done, Math.max(1, conn === undefined ? Math.min(backOff, until - Date.now()) : until - Date.now()));
    if (conn?.ended) done();
    else conn?.onEnd(done);
  });
}

/** Takes the lock of `root`, waiting at most `timeoutMs`; then fails with exit 75 (safe to retry), naming the holder. */
export async function acquireLock(root: string, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS, opts: LockOptions = {}): Promise<HeldLock> {
  destroyLingering();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await contend(root, deadline, timeoutMs, opts);
    if (got !== 'moved') return got;
  }
}

/** One contention in one lock directory; 'moved' when that directory was dropped meanwhile (start over). */
async function contend(root: string, deadline: number, timeoutMs: number, opts: LockOptions): Promise<HeldLock | 'moved'> {
  const dir = lockDir(root);
  let ino: number;
  try {
    ino = ensureLockDir(root);
  } catch (error) {
    throw lockStorageError(error, dir);
  }
  const filesystem = lockFilesystem(dir);
  if (!filesystem.trusted) warnOnce(dir, root, filesystem, opts.warn);
  let me: Contender | undefined;
  try {
    for (;;) {
      me = new Contender(dir, socketAddress(dir));
      try {
        await me.open();
        break;
      } catch (error) {
        // A sweeper took this contender's socket for a dead writer's before its holder file was made: a new one.
        if (!(error instanceof Swept)) throw error;
        me.close();
      }
    }
    let delay = 1;
    // Whether this writer waited for another: its release then leaves the files of the waiters behind it alone.
    let waited = false;
    for (;;) {
      const names = fs.readdirSync(dir);
      // Waiters are queued: this one queues behind them and sleeps on the nearest one ahead, if any lives.
      if ((me.ticket !== undefined || hasQueue(names)) && Date.now() < deadline) {
        joinQueue(me, names);
        const next = await ahead(me, names, filesystem.trusted);
        if (next !== undefined) {
          waited = true;
          traceWait('ahead', next.pid);
          await waitForHolder(next.conn, deadline, 0);
          continue;
        }
      }
      const seen = generationsIn(names);
      const max = seen.at(-1) ?? 0;
      const verdict: Verdict = max === 0 ? { state: 'free' } : await judge(me, max, filesystem);
      if (verdict.state === 'free' || verdict.state === 'dead' || verdict.state === 'mine') {
        const target = verdict.state === 'mine' ? max : max + 1;
        if (verdict.state !== 'mine' && !linkGeneration(me, target)) continue;
        if (generations(dir).some((g) => g > target)) {
          // A late link of a name that had been cleaned up: a newer generation exists. Start over.
          unlinkQuiet(join(dir, `g.${target}`));
          continue;
        }
        if (fs.statSync(dir).ino !== ino) {
          // The directory was dropped (see release) and made anew: this link is in the wrong one.
          unlinkQuiet(join(dir, `g.${target}`));
          me.close();
          return 'moved';
        }
        // What the generations below and a dead holder left is removed at release: the space it frees (a full
        // disk) comes back after this write, not during it.
        const cleanUp = async () => {
          for (const g of seen) if (g < target) unlinkQuiet(join(dir, `g.${g}`));
          if (verdict.state === 'dead' && verdict.socket !== undefined) {
            unlinkQuiet(join(dir, verdict.socket));
            unlinkQuiet(join(dir, `i.${verdict.socket.slice(2)}`));
          }
          if (filesystem.trusted) await sweep(dir, me!.address, fs.readdirSync(dir), new Set([me!.id]), target, waited);
        };
        me.leaveQueue();
        traceLock('enter');
        await holdLockForTest();
        return held(root, me, target, filesystem, verdict.state === 'dead' ? verdict.holder : undefined, cleanUp);
      }
      if (Date.now() >= deadline) {
        if (verdict.state === 'alive') verdict.conn?.linger();
        throw timeoutError(root, dir, timeoutMs, max, verdict);
      }
      // A live holder is waited for on its connection; where there is none to wait on (a busy socket, an
      // untrusted filesystem, an unreadable holder file), a jittered exponential back-off, capped, so that many
      // waiters do not retry in lock-step.
      waited = true;
      // The first to wait on a live holder starts the queue; those that come later sleep on it, not the holder.
      if (verdict.state === 'alive') joinQueue(me, names);
      if (verdict.state === 'alive' && verdict.conn !== undefined) traceWait('holder', verdict.holder?.pid);
      else traceWait('back-off');
      await waitForHolder(verdict.state === 'alive' ? verdict.conn : undefined, deadline, delay * (0.5 + Math.random()));
      delay = Math.min(delay * 2, verdict.state === 'unknown' ? 100 : 25);
    }
  } catch (error) {
    me?.close();
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync(root) && !fs.existsSync(dir)) return 'moved';
    throw lockStorageError(error, dir);
  }
}

function linkGeneration(me: Contender, generation: number): boolean {
  try {
    fs.linkSync(join(me.dir, me.info), join(me.dir, `g.${generation}`));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function held(
  root: string,
  me: Contender,
  generation: number,
  filesystem: LockFilesystem,
  recovered: LockHolder | undefined,
  cleanUp: () => Promise<void>,
): HeldLock {
  let released = false;
  return {
    generation,
    filesystem,
    addressing: me.address.addressing,
    ...(recovered ? { recovered } : {}),
    async release(opts = {}) {
      if (released) return;
      released = true;
      traceLock('exit');
      try {
        await cleanUp();
      } catch {
        // Leftovers stay for the next holder.
      }
      if (opts.dropDir === true && dropDir(root, me, generation)) return;
      me.close({ held: true });
    },
  };
}

/**
 * Removes the lock directory while holding the lock, when nothing but this holder's files is in it (a first
 * write that failed). It is renamed away first: removing the highest generation in place would let a waiter
 * that proved it released take the next one beside a newcomer's first. A contender that linked in the renamed
 * directory sees, by its inode, that it is no longer the lock directory, and starts over.
 */
function dropDir(root: string, me: Contender, generation: number): boolean {
  const mine = new Set([`g.${generation}`, me.socket, me.info]);
  const names = fs.readdirSync(me.dir);
  if (!names.every((n) => mine.has(n) || n.startsWith('warned.'))) return false;
  const moved = join(root, `${LOCK_DIR}.dropped.${me.id}`);
  try {
    fs.renameSync(me.dir, moved);
  } catch {
    return false;
  }
  me.close({ movedTo: moved });
  for (const n of fs.readdirSync(moved)) if (n.startsWith('g.') || n.startsWith('warned.')) unlinkQuiet(join(moved, n));
  try {
    fs.rmdirSync(moved);
  } catch {
    // A contender's files are in it: it leaves when it sees the directory moved.
  }
  return true;
}

/** Exit 75, naming the holder when its holder file tells. */
export class LockTimeout extends CruxError {
  constructor(
    message: string,
    hint: string,
    readonly holder: LockHolder | undefined,
    /** False when the holder may be dead but crux cannot prove it (an untrusted filesystem). */
    readonly provable: boolean,
  ) {
    super('lock_timeout', message, hint);
  }
}

function timeoutError(root: string, dir: string, timeoutMs: number, generation: number, verdict: Verdict): LockTimeout {
  const who = verdict.holder ? `, locked by ${describeHolder(verdict.holder)}` : '';
  const message = `the data directory is locked by another crux process (waited ${Math.round(timeoutMs / 1000)} s): ${root}${who}`;
  if (verdict.state === 'unknown') {
    return new LockTimeout(message, `${verdict.why}; if that process has ended, remove ${join(dir, `g.${generation}`)} and retry`, verdict.holder, false);
  }
  return new LockTimeout(message, 'safe to retry; raise CRUX_LOCK_TIMEOUT to wait longer', verdict.holder, true);
}

/** How the lock of `root` works here: the socket addressing and the filesystem's trust (for doctor). */
export function lockMechanism(root: string): { addressing: Addressing; filesystem: LockFilesystem } {
  const dir = lockDir(root);
  return { addressing: chooseAddressing(dir), filesystem: lockFilesystem(fs.existsSync(dir) ? dir : root) };
}

function lockStorageError(error: unknown, path: string): unknown {
  // The lock needs a little room too (a socket, a holder file): on a full disk it fails as a write would.
  if ((error as NodeJS.ErrnoException)?.code === 'EIO')
    return new CruxError('disk_full', `an I/O error: cannot write ${path} (EIO)`, 'nothing was written; check the disk and retry');
  return asStorageError(error, path);
}
