// A torn tail met by a reader (SPEC §3): an unterminated last line is a write in progress while a writer holds
// the lock, and passed over; otherwise it is damage, reported like any bad line (stderr, and `warnings`). And
// the same question of an index behind its journal: a write in progress, or a prefix no longer verified.
import { fs } from '../../shared/fs';
import { acquireLock, LockTimeout } from './lock/lock';
import { reportDamage, type Reporter } from '../codec/reporting';
import type { TornTail } from '../codec/scan';

/** The reason `journal check` gives for the same tail. */
const reasonOf = (torn: TornTail) =>
  torn.batch === undefined
    ? `torn tail (${torn.length} bytes without a final newline)`
    : `torn tail (an incomplete batch: ${torn.batch.seen} of ${torn.batch.want} records)`;

/** Whether the journal still ends, past `offset`, without its final newline (a writer may have finished meanwhile). */
function stillTorn(path: string, torn: TornTail): boolean {
  let fd: number;
  try {
    // Only a regular file is read (a FIFO would block): the journal was one a moment ago.
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size <= torn.offset) return false;
    if (torn.batch !== undefined) return stat.size === torn.offset + torn.length;
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, stat.size - 1);
    return last[0] !== 0x0a;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Tells `reporter` of the torn tail a read passed over, unless it is a write in progress: the lock is tried
 * without waiting; held, a writer is between its write and its end, and the tail is its own. Free (or taken
 * over from a writer that died), the tail is looked at again under it, and reported when it is still there.
 * A lock that cannot be taken at all (a read-only data directory) cannot tell: the tail is reported.
 */
export async function reportTornTail(root: string, path: string, file: string, torn: TornTail | undefined, reporter: Reporter): Promise<void> {
  if (torn === undefined) return;
  let release: (() => Promise<void>) | undefined;
  try {
    const lock = await acquireLock(root, 0);
    release = () => lock.release();
  } catch (error) {
    if (error instanceof LockTimeout) return;
  }
  try {
    if (release !== undefined && !stillTorn(path, torn)) return;
    const reason = reasonOf(torn);
    reportDamage(reporter, { file, line: torn.line, reason }, `${path}:${torn.line}: ${reason} (run \`crux journal check\`)`);
  } finally {
    await release?.();
  }
}

/**
 * A read through the index, unless the journal runs past what the index covers while no writer holds the lock (a
 * writer killed before its index append, cache/ put back from a backup): the prefix the index trusts unread (who
 * matches, how many) may have changed since (a flipped bit), so the caller rebuilds it by a verifying scan (a
 * replay over damage). Held, the journal past it is the holder's write, indexed next. A lock that cannot be
 * taken at all (a read-only data directory) cannot tell: not trusted.
 */
export async function trustedRead<T extends { readonly gap?: number }>(root: string, read: T | undefined): Promise<T | undefined> {
  if (read === undefined || !read.gap) return read;
  try {
    await (await acquireLock(root, 0)).release();
    return undefined;
  } catch (error) {
    return error instanceof LockTimeout ? read : undefined;
  }
}
