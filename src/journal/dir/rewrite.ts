// Replacing a journal whole (compaction, repair; copy's restore streams into the same temp: dir-create.ts): temp
// file (with the old file's owner, group and mode), fsync, atomic rename, fsync the directory.
// A crash at any step leaves either the old journal or the new one, never a mixture.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { asStorageError, fsyncDir, ownershipOf, writeNewFileDurable } from '../../shared/durable-fs';
import { crashPoint } from '../../shared/crash-point';
import { quarantineBytes } from './quarantine';

const tempPrefix = (file: string) => `.${file}.rewrite-`;
/** Where this process writes a new journal `file` before renaming it over the old one. */
export const journalTemp = (root: string, file: string) => join(root, `${tempPrefix(file)}${process.pid}.tmp`);

export function replaceJournal(root: string, file: string, text: string | Uint8Array): number {
  const temp = journalTemp(root, file);
  fs.rmSync(temp, { force: true });
  try {
    // The new file takes the old one's owner, group and mode (SPEC §3: a rewrite keeps them).
    writeNewFileDurable(temp, text, { like: ownershipOf(join(root, file)) });
    crashPoint('rewrite:before-rename');
    fs.renameSync(temp, join(root, file));
    crashPoint('rewrite:after-rename');
    fsyncDir(root);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw asStorageError(error, join(root, file));
  }
  return typeof text === 'string' ? Buffer.byteLength(text) : text.length;
}

/** Moves temp files left by a rewrite that crashed before its rename into quarantine. Call under the lock. */
export function sweepStrayTemps(root: string, file: string, ts: string): string[] {
  const moved: string[] = [];
  for (const name of fs.readdirSync(root)) {
    if (!name.startsWith(tempPrefix(file))) continue;
    const path = join(root, name);
    moved.push(quarantineBytes(root, file, 'stray-rewrite', fs.readFileSync(path), ts));
    fs.rmSync(path);
  }
  if (moved.length > 0) fsyncDir(root);
  return moved;
}
