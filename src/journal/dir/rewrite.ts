// Replacing a journal whole (compaction, repair, copy's restore): temp file (with the old file's owner, group and mode), fsync,
// atomic rename, fsync the directory.
// A crash at any step leaves either the old journal or the new one, never a mixture.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { asStorageError, fsyncDir, ownershipOf, writeNewFileDurable } from '../../shared/durable-fs';
import { crashPoint } from '../../shared/crash-point';
import { quarantineBytes } from './quarantine';
import { writeNewFileFrom } from './line-stream';

const tempPrefix = (file: string) => `.${file}.rewrite-`;

export function replaceJournal(root: string, file: string, text: string | Uint8Array): number {
  const temp = join(root, `${tempPrefix(file)}${process.pid}.tmp`);
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

/**
 * replaceJournal from a stream of lines (each written with its `\n`), a chunk at a time: `journal copy`'s restore.
 * `beforeRename` runs once every line is written and durable, before the new journal appears.
 */
export async function replaceJournalFrom(
  root: string,
  file: string,
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  beforeRename: () => Promise<void> = async () => {},
): Promise<number> {
  const temp = join(root, `${tempPrefix(file)}${process.pid}.tmp`);
  fs.rmSync(temp, { force: true });
  try {
    const bytes = await writeNewFileFrom(temp, lines);
    await beforeRename();
    fs.renameSync(temp, join(root, file));
    fsyncDir(root);
    return bytes;
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw asStorageError(error, join(root, file));
  }
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
