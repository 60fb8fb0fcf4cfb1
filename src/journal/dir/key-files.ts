// Key files under `keys/`: created exclusively (0600, fsynced, never half-written), refused when others can read them.
import { fs } from '../../shared/fs';
import { basename, dirname, join } from 'node:path';
import { invalid } from '../../shared/errors';
import { asStorageError, DIR_MODE, ensurePrivateDir, fsyncDir, writeNewFileDurable } from '../../shared/durable-fs';
import type { KeyFacts, KeyStore } from '../core/store-boundary';

// node:crypto costs ~2 ms to load, and only a write of a key needs it (readers of this module never do).
const tempSuffix = () => (require('node:crypto') as typeof import('node:crypto')).randomBytes(6).toString('hex');

export const KEYS_DIR = 'keys';

/**
 * Reads a private key file, or undefined when there is none. Like ssh, refuses a file that group or others
 * may read or write (exit 5, with the chmod that fixes it), and anything that is not a regular file.
 */
function readPrivateFile(path: string): Buffer | undefined {
  let st: import('node:fs').Stats;
  try {
    st = fs.lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw asStorageError(error, path);
  }
  if (!st.isFile()) throw invalid(`the key file ${path} is not a regular file`, 'remove it; crux creates its keys itself');
  if ((st.mode & 0o077) !== 0) {
    throw invalid(
      `the key file ${path} is accessible by others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); crux refuses to use it`,
      `chmod 600 ${path}`,
    );
  }
  try {
    return fs.readFileSync(path);
  } catch (error) {
    throw asStorageError(error, path);
  }
}

/**
 * Creates `path` with `bytes` (mode 0600) unless it exists, atomically: the bytes go to a private temp file
 * that is fsynced and then hard-linked into place, so a reader never sees a partial key and of two racing
 * creators exactly one wins. Returns false when the file already existed (the caller reads the winner's).
 */
function createPrivateFileExclusive(path: string, bytes: Uint8Array | string): boolean {
  const dir = dirname(path);
  const created = ensurePrivateDir(dir);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${tempSuffix()}.tmp`);
  try {
    fs.chmodSync(dir, DIR_MODE);
    writeNewFileDurable(temp, bytes);
    try {
      fs.linkSync(temp, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
    fsyncDir(dir);
    return true;
  } catch (error) {
    // A key that could not be made (a full disk) leaves nothing behind: not even the keys/ it created.
    if (created) {
      try {
        fs.rmdirSync(dir);
      } catch {
        // Not empty: another process made a key meanwhile.
      }
    }
    throw asStorageError(error, path);
  }
}

/** Writes a file that is not key material but must stay private (an exported envelope): 0600, replaced atomically. */
export function writePrivateFile(path: string, bytes: Uint8Array | string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${tempSuffix()}.tmp`);
  try {
    writeNewFileDurable(temp, bytes);
    fs.renameSync(temp, path);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw asStorageError(error, path);
  }
}

const KEY_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** A data directory's key store: one file per item under keys/ (0700), each 0600. */
export class DirKeyStore implements KeyStore {
  constructor(private readonly root: string) {}

  describe(name: string): string {
    return join(this.root, KEYS_DIR, name);
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    return readPrivateFile(this.pathOf(name));
  }

  async create(name: string, bytes: Uint8Array | string): Promise<boolean> {
    return createPrivateFileExclusive(this.pathOf(name), bytes);
  }

  /** Mode and size of a key file (for `doctor` and messages), or undefined when it does not exist. */
  async stat(name: string): Promise<KeyFacts | undefined> {
    const path = this.pathOf(name);
    try {
      const st = fs.statSync(path);
      return { path, mode: st.mode & 0o777, bytes: st.size };
    } catch {
      return undefined;
    }
  }

  async peek(name: string): Promise<Uint8Array | undefined> {
    try {
      const path = this.pathOf(name);
      if (fs.statSync(path).size > 64 * 1024) return undefined;
      return fs.readFileSync(path);
    } catch {
      return undefined;
    }
  }

  async list(): Promise<string[]> {
    try {
      return fs
        .readdirSync(join(this.root, KEYS_DIR))
        .filter((n) => KEY_NAME.test(n) && !n.startsWith('.'))
        .sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw asStorageError(error, join(this.root, KEYS_DIR));
    }
  }

  private pathOf(name: string): string {
    if (!KEY_NAME.test(name) || name.startsWith('.')) throw new Error(`not a key name: ${JSON.stringify(name)}`);
    return this.describe(name);
  }
}
