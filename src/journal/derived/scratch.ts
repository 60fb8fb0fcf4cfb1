// Scratch space for a streamed snapshot build (snapshot-stream.ts): plain files in cache/, each unlinked as soon
// as it is open (spill.ts openScratchFile), and sorts that spill their runs there (spill.ts). Any failure to create,
// write or read them (a full disk, an unusable cache/) throws SpillFailed: the build is given up, the caller
// replays.
import { fs } from '../../shared/fs';
import type { Scratch, ScratchFile } from '../codec/store-spec';
import { writeFully } from './cache-file';
import { hash56 } from './entries';
import { openScratchFile, SpillFailed, SpillSort } from './spill';

export class ScratchSpace implements Scratch {
  private readonly files: FileOnDisk[] = [];
  private readonly sorts: SpillSort[] = [];

  constructor(
    private readonly root: string,
    private readonly journal: string,
  ) {}

  file(): ScratchFile {
    const fd = openScratchFile(this.root, this.journal);
    const file = new FileOnDisk(fd, this.journal);
    this.files.push(file);
    return file;
  }

  sort(words: 2 | 4): SpillSort {
    const sort = new SpillSort(this.root, this.journal, words);
    this.sorts.push(sort);
    return sort;
  }

  keyHash(text: string): [number, number] {
    return hash56(text);
  }

  close(): void {
    for (const file of this.files) file.close();
    for (const sort of this.sorts) sort.close();
    this.files.length = this.sorts.length = 0;
  }
}

class FileOnDisk implements ScratchFile {
  size = 0;

  constructor(
    private readonly fd: number,
    private readonly journal: string,
  ) {}

  append(bytes: Uint8Array): void {
    try {
      writeFully(this.fd, bytes, this.size);
    } catch (error) {
      throw new SpillFailed(`${this.journal}: a scratch file could not be written (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
    this.size += bytes.length;
  }

  read(into: Uint8Array, position: number): number {
    try {
      return fs.readSync(this.fd, into, 0, Math.min(into.length, Math.max(0, this.size - position)), position);
    } catch (error) {
      throw new SpillFailed(`${this.journal}: a scratch file could not be read (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
  }

  close(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }
}
