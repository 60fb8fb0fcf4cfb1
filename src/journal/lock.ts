// The writers' lock: one per data directory, excluding every writer wherever it runs (SPEC §3).
//
// Files in <data dir>/.lock/ (they are filesystem objects, so network and PID namespaces, symlinks and bind
// mounts all see the same ones):
//   s.<id>  a contender's listening Unix socket: it accepts while its process lives; once the process has
//           died the kernel refuses every connection to it (ECONNREFUSED), which proves the death at once;
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
// Waiters keep their probe connection open: the kernel closes it when the holder releases or dies, which
// wakes them at once (the back-off timer is the fallback). node:net is loaded by writers only.
import { fs } from '../shared/fs';
import { hostname, uptime } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { CruxError } from '../shared/errors';
import { asStorageError } from './durable-fs';
import { scrubText } from '../shared/scrub';
import { holdLockForTest, traceLock } from './crash-point';
import { chooseAddressing, lockFilesystem, socketAddress, type Addressing, type LockFilesystem, type SocketAddress } from './lock-fs';

export const LOCK_DIR = '.lock';
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

interface HolderFile {
  pid: number;
  command: string;
  host: string;
  since: string;
  socket: string;
}

type Verdict =
  | { state: 'free'; holder?: undefined }
  | { state: 'dead'; holder?: LockHolder; socket?: string }
  | { state: 'mine'; holder?: undefined }
  | { state: 'alive'; holder?: LockHolder; conn?: Socket }
  /** Cannot be proved dead: a refusal on an untrusted filesystem, or a holder file that cannot be read. */
  | { state: 'unknown'; holder?: LockHolder; why: string };

type Net = typeof import('node:net');
let net: Net | undefined;
// node:net is loaded only by writers, so readers never pay for it (a bundled require, not import()).
const loadNet = (): Net => (net ??= require('node:net') as Net);

const GENERATION = /^g\.(\d+)$/;
const SOCKET = /^s\.\d+\.[0-9a-f]+$/;

/** The lock directory of a data directory (created on demand; an empty `.lock` file of older crux is replaced). */
export function lockDir(root: string): string {
  return join(root, LOCK_DIR);
}

/** Creates the lock directory when missing; returns its inode, which a holder checks after linking. */
/** The owner to give the lock's files to: the lock directory's, when this process is root and it is not. */
function ownerOf(dir: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = fs.statSync(dir);
  return st.uid === 0 ? undefined : { uid: st.uid, gid: st.gid };
}

function ensureLockDir(root: string): number {
  const dir = lockDir(root);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
      // A root writer in a user's data directory leaves the lock directory to the directory's owner.
      if (process.getuid?.() === 0) {
        const owner = fs.statSync(root);
        if (owner.uid !== 0) fs.chownSync(dir, owner.uid, owner.gid);
      }
      return fs.statSync(dir).ino;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw error;
    }
    const st = fs.lstatSync(dir);
    if (st.isDirectory()) return st.ino;
    if (!st.isFile() || st.size !== 0 || attempt > 0) throw new CruxError('invalid_input', `${dir} is not the lock directory crux expects`, `move it away; crux keeps its lock there`);
    try {
      fs.unlinkSync(dir);
    } catch {
      // Another writer replaced it first.
    }
  }
}

function generations(dir: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync(dir)) {
    const m = GENERATION.exec(name);
    if (m) found.push(Number(m[1]));
  }
  return found.sort((a, b) => a - b);
}

const unlinkQuiet = (path: string) => {
  try {
    fs.unlinkSync(path);
  } catch {
    // Gone already (another holder cleaned it up).
  }
};

function readHolder(path: string): HolderFile | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path, 'utf8')) as HolderFile;
    return typeof parsed.pid === 'number' && typeof parsed.socket === 'string' && SOCKET.test(parsed.socket) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** An empty holder file (written on a full disk): its other name, i.<pid>.<hex>, names the socket. */
function holderByInode(dir: string, generationPath: string): HolderFile | undefined {
  try {
    const { ino } = fs.statSync(generationPath);
    for (const name of fs.readdirSync(dir)) {
      if (!name.startsWith('i.') || fs.statSync(join(dir, name)).ino !== ino) continue;
      const id = name.slice(2);
      return { pid: Number(id.split('.')[0]), command: '', host: hostname(), since: '', socket: `s.${id}` };
    }
  } catch {
    // Changed while being read: judged unknown, and looked at again.
  }
  return undefined;
}

/** Connects to a socket of the lock directory: alive (connected, or busy), or proved gone (ENOENT) or dead (ECONNREFUSED). */
function probe(address: SocketAddress, socket: string): Promise<{ answer: 'alive'; conn?: Socket } | { answer: 'gone' | 'refused' }> {
  // A socket that is not there is gone, as a connect would find (ENOENT): the common case, the last holder having
  // released, is answered by one lstat instead of a connection attempt and a turn of the event loop.
  if (address.at(socket, (path) => fs.lstatSync(path, { throwIfNoEntry: false })) === undefined) return Promise.resolve({ answer: 'gone' });
  return new Promise((resolve) => {
    // The connect(2) happens inside net.connect, synchronously: the address is resolved before `at` returns.
    const conn = address.at(socket, (path) => loadNet().connect(path));
    conn.on('error', () => {});
    conn.once('connect', () => {
      // Flowing, so that the holder's end of the connection (its release or death) closes ours.
      conn.resume();
      resolve({ answer: 'alive', conn });
    });
    conn.once('error', (error: NodeJS.ErrnoException) => {
      conn.destroy();
      resolve(error.code === 'ENOENT' ? { answer: 'gone' } : error.code === 'ECONNREFUSED' ? { answer: 'refused' } : { answer: 'alive' });
    });
  });
}

/** A contender: its listening socket and holder file, from before it links a generation until it releases. */
class Contender {
  // Unique among the contenders of one pid (the pid itself tells processes apart); node:crypto is not needed.
  readonly id = `${process.pid}.${Math.floor(Math.random() * 2 ** 48).toString(16).padStart(12, '0')}`;
  readonly socket = `s.${this.id}`;
  readonly info = `i.${this.id}`;
  private server: import('node:net').Server | undefined;
  private readonly conns = new Set<Socket>();
  /** Whether the holder file holds the holder's name (not so on a full disk). */
  private named = false;

  constructor(
    readonly dir: string,
    readonly address: SocketAddress,
  ) {}

  async open(): Promise<void> {
    const server = loadNet().createServer((conn) => {
      // A waiter's probe: kept open (and closed by the kernel when this process ends) so the waiter wakes then.
      conn.unref();
      conn.on('error', () => {});
      conn.resume();
      this.conns.add(conn);
      conn.once('close', () => this.conns.delete(conn));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.once('listening', resolve);
      // bind(2) and listen(2) happen inside listen(), synchronously.
      this.address.at(this.socket, (path) => server.listen(path));
    });
    server.on('error', () => {});
    server.unref();
    // Private like every file crux makes (0600); a root writer in a user's data directory gives its files to
    // the directory's owner, so that the owner's writers can connect, read and clean up.
    const socketPath = join(this.dir, this.socket);
    fs.chmodSync(socketPath, 0o600);
    const owner = ownerOf(this.dir);
    if (owner !== undefined) fs.chownSync(socketPath, owner.uid, owner.gid);
    const holder: HolderFile = { pid: process.pid, command: commandLine(), host: hostname(), since: new Date().toISOString(), socket: this.socket };
    const fd = fs.openSync(join(this.dir, this.info), 'wx', 0o600);
    try {
      if (owner !== undefined) fs.fchownSync(fd, owner.uid, owner.gid);
      fs.writeSync(fd, `${JSON.stringify(holder)}\n`);
      this.named = true;
    } catch (error) {
      // A full disk has no room for the holder's name: the file stays empty, and is found by its inode.
      if (!['ENOSPC', 'EDQUOT', 'EFBIG'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * `held`: this contender holds the highest generation; an empty holder file stays (the next holder removes
   * it), so that the generation can still be traced to its socket by inode. `movedTo`: the lock
   * directory was renamed there (a dropped directory); clean up in it.
   */
  close(opts: { held?: boolean; movedTo?: string } = {}): void {
    const { movedTo } = opts;
    for (const conn of this.conns) conn.destroy();
    // Closing the server unlinks its socket by the name it was bound to (libuv), so close where that name resolves.
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) {
      if (movedTo === undefined) this.address.at(this.socket, () => server.close());
      else server.close();
    }
    unlinkQuiet(join(movedTo ?? this.dir, this.socket));
    if (!opts.held || this.named) unlinkQuiet(join(movedTo ?? this.dir, this.info));
    this.address.close();
  }
}

/** The command line a holder file names: scrubbed of credentials, short. */
function commandLine(): string {
  const text = ['crux', ...process.argv.slice(2)].join(' ');
  return scrubText(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** `pid 1234 (crux session put a …)`, and the host when it is another: for messages and doctor. */
export function describeHolder(holder: Pick<LockHolder, 'pid' | 'command' | 'host'>): string {
  const visible = holder.command.replace(/[\p{Cc}\p{Cf}]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  const short = visible.length > 60 ? `${visible.slice(0, 59)}…` : visible;
  return `pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}${short ? ` (${short})` : ''}`;
}

const bootTime = () => Date.now() - uptime() * 1000;

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

/** Sleeps `ms`, or less when the probe connection to the holder closes (it released or died). */
function pause(ms: number, conn: Socket | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      conn?.destroy();
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (conn?.destroyed) done();
    else conn?.once('close', done);
  });
}

/** Leftover holder files of contenders that died while waiting are removed once they pile up. */
const SWEEP_AT = 32;

async function sweep(contender: Contender): Promise<void> {
  const others = fs.readdirSync(contender.dir).filter((n) => n.startsWith('i.') && n !== contender.info);
  if (others.length < SWEEP_AT) return;
  for (const name of others) {
    // A holder file is made after its socket listens: a refusal now means the writer closed it or died.
    const socket = `s.${name.slice(2)}`;
    if (!SOCKET.test(socket)) continue;
    const seen = await probe(contender.address, socket);
    if (seen.answer === 'alive') seen.conn?.destroy();
    else {
      unlinkQuiet(join(contender.dir, socket));
      unlinkQuiet(join(contender.dir, name));
    }
  }
}

function warnOnce(dir: string, root: string, filesystem: LockFilesystem, warn: LockOptions['warn']): void {
  if (warn === undefined) return;
  const marker = join(dir, `warned.${filesystem.type}`);
  if (fs.existsSync(marker)) return;
  try {
    fs.writeFileSync(marker, '', { flag: 'wx', mode: 0o600 });
  } catch {
    return; // Another writer warned first.
  }
  warn(
    `${root} is on ${filesystem.type}: crux cannot prove a lock holder on another host dead there, so a writer killed elsewhere blocks the others (exit 75) until its lock is removed by hand; see \`crux doctor\``,
  );
}

const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the lock of `root`, waiting at most `timeoutMs`; then fails with exit 75 (safe to retry), naming the holder. */
export async function acquireLock(root: string, timeoutMs = DEFAULT_LOCK_TIMEOUT_MS, opts: LockOptions = {}): Promise<HeldLock> {
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
    me = new Contender(dir, socketAddress(dir));
    await me.open();
    let delay = 1;
    for (;;) {
      const seen = generations(dir);
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
          await sweep(me!);
        };
        traceLock('enter');
        await holdLockForTest();
        return held(root, me, target, filesystem, verdict.state === 'dead' ? verdict.holder : undefined, cleanUp);
      }
      if (Date.now() >= deadline) {
        if (verdict.state === 'alive') verdict.conn?.destroy();
        throw timeoutError(root, dir, timeoutMs, max, verdict);
      }
      // Jittered exponential back-off, capped, so that many waiters do not retry in lock-step; a closing probe
      // connection (the holder released or died) ends the wait early.
      const wait = Math.min(delay * (0.5 + Math.random()), Math.max(1, deadline - Date.now()));
      if (verdict.state === 'alive') await pause(wait, verdict.conn);
      else await sleepMs(wait);
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

function held(root: string, me: Contender, generation: number, filesystem: LockFilesystem, recovered: LockHolder | undefined, cleanUp: () => Promise<void>): HeldLock {
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
  if ((error as NodeJS.ErrnoException)?.code === 'EIO') return new CruxError('disk_full', `an I/O error: cannot write ${path} (EIO)`, 'nothing was written; check the disk and retry');
  return asStorageError(error, path);
}
