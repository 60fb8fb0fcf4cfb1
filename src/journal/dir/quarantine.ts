// The quarantine: bytes taken out of a journal (torn tails, bad lines, stray temp files) are kept, never deleted.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { ensurePrivateDir, fsyncDir, writeNewFileDurable } from '../../shared/durable-fs';

export const QUARANTINE_DIR = 'quarantine';

const stamp = (ts: string) => ts.replace(/[:]/g, '-');

/** Stores `bytes` under quarantine/ as `<journal>.<time>.<label>`, durably; returns the relative path. */
export function quarantineBytes(root: string, journalFile: string, label: string, bytes: Uint8Array | string, ts: string): string {
  const dir = join(root, QUARANTINE_DIR);
  const created = ensurePrivateDir(dir);
  for (let attempt = 0; ; attempt++) {
    const name = `${journalFile}.${stamp(ts)}.${process.pid}${attempt ? `-${attempt}` : ''}.${label}`;
    try {
      writeNewFileDurable(join(dir, name), bytes);
      fsyncDir(dir);
      return join(QUARANTINE_DIR, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        // A failed command leaves the data directory as it was (e.g. a full disk): no empty quarantine/.
        if (created) fs.rmdirSync(dir);
        throw error;
      }
    }
  }
}

/** The quarantined items of one journal (or of all, without a name). */
export function listQuarantine(root: string, journalFile?: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, QUARANTINE_DIR));
  } catch {
    return [];
  }
  return names.filter((n) => journalFile === undefined || n.startsWith(`${journalFile}.`)).sort();
}
