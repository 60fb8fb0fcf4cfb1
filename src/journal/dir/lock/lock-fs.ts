// What the writers' lock needs to know about the filesystem it lives on, and how it reaches its sockets.
//
// Trust: the lock proves a holder dead when its listening socket refuses a connection. That proof holds on a
// filesystem only one kernel uses; on a network or user-space filesystem (NFS, SMB, FUSE, 9p, cluster
// filesystems) the holder may sit on another host, where its socket refuses us while it is alive.
//
// Addressing: a socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS), a data directory's need
// not. `procfd` reaches the lock directory through /proc/self/fd/<fd>/ (Linux: any length); `chdir` binds and
// connects to a relative name from inside it (portable; the process's working directory changes for the
// length of one synchronous call); `direct` uses the absolute path where it fits.
import { fs } from '../../../shared/fs';
import { join } from 'node:path';

/** Linux statfs magic numbers of filesystems whose sockets another kernel may share. */
const UNTRUSTED_FS: Record<number, string> = {
  0x6969: 'nfs',
  0x517b: 'smb',
  0xff534d42: 'cifs',
  0xfe534d42: 'smb2',
  0x65735546: 'fuse',
  0x01021997: '9p',
  0x00c36400: 'ceph',
  0x5346414f: 'afs',
  0x6b414653: 'afs',
  0x01161970: 'gfs2',
  0x7461636f: 'ocfs2',
  0x0bd00bd0: 'lustre',
  0x73757245: 'coda',
  0x47504653: 'gpfs',
  0x786f4256: 'vboxsf',
  0x19830326: 'orangefs',
};

/** Linux statfs magic numbers of local filesystems, so that doctor names them (ext4, not 0xef53). */
const LOCAL_FS: Record<number, string> = {
  0xef53: 'ext4',
  0x01021994: 'tmpfs',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x794c7630: 'overlay',
  0x2fc12fc1: 'zfs',
  0xf2f52010: 'f2fs',
  0x4d44: 'vfat',
  0x5346544e: 'ntfs',
  0x2011bab0: 'exfat',
  0x3153464a: 'jfs',
  0x52654973: 'reiserfs',
  0x9fa0: 'proc',
  0x858458f6: 'ramfs',
  0x62656572: 'sysfs',
  0x73717368: 'squashfs',
  0xca451a4e: 'bcachefs',
};

export interface LockFilesystem {
  /** The filesystem's name where crux knows it (ext4, tmpfs, nfs, fuse, …), else its magic number in hex. */
  readonly type: string;
  /** Whether a refused connection proves the holder dead here. */
  readonly trusted: boolean;
}

/**
 * The filesystem of `dir`. CRUX_TEST_FS_TYPE=<name or 0xmagic> pretends one (tests). Outside Linux the magic
 * numbers mean nothing stable, so the filesystem counts as local (macOS: an SMB or NFS data directory is not
 * recognised; see crux-journal(5)).
 */
export function lockFilesystem(dir: string): LockFilesystem {
  const pretend = process.env.CRUX_TEST_FS_TYPE;
  if (pretend) {
    const type = /^0x[0-9a-f]+$/i.test(pretend) ? (UNTRUSTED_FS[Number(pretend)] ?? pretend) : pretend;
    return { type, trusted: !Object.values(UNTRUSTED_FS).includes(type) };
  }
  if (process.platform !== 'linux' || typeof fs.statfsSync !== 'function') return { type: process.platform, trusted: true };
  let magic: number;
  try {
    magic = fs.statfsSync(dir).type >>> 0;
  } catch {
    return { type: 'unknown', trusted: true };
  }
  const name = UNTRUSTED_FS[magic];
  return { type: name ?? LOCAL_FS[magic] ?? `0x${magic.toString(16)}`, trusted: name === undefined };
}

/** Warns once per lock directory (a marker file in it) that its filesystem cannot be trusted (see above). */
export function warnOnce(dir: string, root: string, filesystem: LockFilesystem, warn: ((message: string) => void) | undefined): void {
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

export type Addressing = 'procfd' | 'chdir' | 'direct';

/** The longest socket path every platform takes (macOS: 104 bytes with the terminating NUL). */
const SUN_PATH_MAX = 103;

/** How sockets in one lock directory are named to the kernel. */
export interface SocketAddress {
  readonly addressing: Addressing;
  /** Runs `fn` with a path the kernel resolves to `name` inside the lock directory, synchronously. */
  at<T>(name: string, fn: (path: string) => T): T;
  close(): void;
}

/** CRUX_TEST_LOCK_ADDRESS=procfd|chdir|direct picks the addressing (tests run each); else the best one here. */
export function chooseAddressing(lockDir: string): Addressing {
  const forced = process.env.CRUX_TEST_LOCK_ADDRESS;
  let addressing: Addressing = process.platform === 'linux' ? 'procfd' : 'direct';
  if (forced === 'procfd' || forced === 'chdir' || forced === 'direct') addressing = forced;
  // Socket names are short (s.<pid>.<hex>): 32 bytes leave room for them.
  if (addressing === 'direct' && Buffer.byteLength(lockDir) + 32 > SUN_PATH_MAX) addressing = 'chdir';
  return addressing;
}

export function socketAddress(lockDir: string): SocketAddress {
  const addressing = chooseAddressing(lockDir);
  if (addressing === 'procfd') {
    const fd = fs.openSync(lockDir, 'r');
    return { addressing, at: (name, fn) => fn(`/proc/self/fd/${fd}/${name}`), close: () => fs.closeSync(fd) };
  }
  if (addressing === 'direct') return { addressing, at: (name, fn) => fn(`${lockDir}/${name}`), close: () => {} };
  return {
    addressing,
    at(name, fn) {
      let cwd: string | undefined;
      try {
        cwd = process.cwd();
      } catch {
        // The working directory was removed: there is none to go back to.
      }
      process.chdir(lockDir);
      try {
        return fn(name);
      } finally {
        process.chdir(cwd ?? '/');
      }
    },
    close: () => {},
  };
}
