// The files of the writers' lock directory (see lock.ts for the protocol): their names, the holder files read
// as regular files only, the generations.
import { fs } from '../../../shared/fs';
// node:os only where /proc does not tell the host name: loading it costs ~0.9 M instructions, reading /proc nothing
// a put does not pay already.
const os = (): typeof import('node:os') => require('node:os');
import { join } from 'node:path';
import { CruxError } from '../../../shared/errors';

export const LOCK_DIR = '.lock';

/** What a holder file says: written by a contender after its socket listens (see lock-socket.ts). */
export interface HolderFile {
  pid: number;
  command: string;
  host: string;
  since: string;
  socket: string;
}

const GENERATION = /^g\.(\d+)$/;
/** A contender's id: its pid and 48 random bits. */
export const CONTENDER_ID = /^\d+\.[0-9a-f]+$/;
const isSocketName = (name: string) => name.startsWith('s.') && CONTENDER_ID.test(name.slice(2));

let host: string | undefined;
/** This host's name, for holder files: Linux's /proc/sys/kernel/hostname is gethostname(2)'s (the UTS namespace's). */
export function hostname(): string {
  if (host !== undefined) return host;
  try {
    if (process.platform === 'linux') host = fs.readFileSync('/proc/sys/kernel/hostname', 'utf8').trim() || undefined;
  } catch {
    // No /proc (a container without it): as Node tells.
  }
  return (host ??= os().hostname());
}

/** The lock directory of a data directory. */
export function lockDir(root: string): string {
  return join(root, LOCK_DIR);
}

/** The owner to give the lock's files to: the lock directory's, when this process is root and it is not. */
export function ownerOf(dir: string): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const st = fs.statSync(dir);
  return st.uid === 0 ? undefined : { uid: st.uid, gid: st.gid };
}

/** Creates the lock directory when missing (an empty `.lock` file of older crux is replaced); returns its inode. */
export function ensureLockDir(root: string): number {
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
    if (!st.isFile() || st.size !== 0 || attempt > 0)
      throw new CruxError('invalid_input', `${dir} is not the lock directory crux expects`, `move it away; crux keeps its lock there`);
    try {
      fs.unlinkSync(dir);
    } catch {
      // Another writer replaced it first.
    }
  }
}

/** The generations in `names` (a listing of the lock directory), lowest first. */
export function generationsIn(names: readonly string[]): number[] {
  const found: number[] = [];
  for (const name of names) {
    const m = GENERATION.exec(name);
    if (m) found.push(Number(m[1]));
  }
  return found.sort((a, b) => a - b);
}

export const generations = (dir: string) => generationsIn(fs.readdirSync(dir));

export const unlinkQuiet = (path: string) => {
  try {
    fs.unlinkSync(path);
  } catch {
    // Gone already (another holder cleaned it up).
  }
};

const NOT_REGULAR = (path: string, what: string) =>
  new CruxError('invalid_input', `${path} is ${what}, not a file crux made`, 'move it away; crux keeps only its own files in its lock directory');

/**
 * The bytes of a lock file, opened without blocking and only when it is a regular file: a FIFO in its place
 * would block read(2) forever, past CRUX_LOCK_TIMEOUT; a FIFO, device or directory is refused (exit 5).
 * Undefined when it is not there.
 */
function readRegular(path: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw NOT_REGULAR(path, 'a symbolic link');
    if (code === 'EISDIR') throw NOT_REGULAR(path, 'a directory');
    throw error;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw NOT_REGULAR(path, st.isFIFO() ? 'a FIFO' : st.isDirectory() ? 'a directory' : st.isSocket() ? 'a socket' : 'a device');
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** A holder file's contents, or undefined when it is gone or not what a contender writes (empty: a full disk). */
export function readHolder(path: string): HolderFile | undefined {
  const text = readRegular(path);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as HolderFile;
    return typeof parsed.pid === 'number' && typeof parsed.socket === 'string' && isSocketName(parsed.socket) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** An empty holder file (written on a full disk): its other name, i.<pid>.<hex>, names the socket. */
export function holderByInode(dir: string, generationPath: string): HolderFile | undefined {
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
