// A data directory's history/ as `journal copy` moves it: each file a piece, read and written byte for byte.
import { fs } from '../shared/fs';
import { join } from 'node:path';
import { asStorageError, ensurePrivateDir, fsyncDir, writeNewFileDurable } from './durable-fs';
import { HISTORY_DIR, listHistory } from './history';
import type { HistoryPiece } from './store-boundary';

/** Journal `file`'s history files, oldest first, each split into its lines (without `\n`). */
export function readHistoryPieces(root: string, file: string): HistoryPiece[] {
  return listHistory(root, file).map((h) => {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(h.path);
    } catch (error) {
      throw asStorageError(error, h.path);
    }
    return { name: h.name.slice(HISTORY_DIR.length + 1), lines: splitLines(bytes) };
  });
}

/** Writes history pieces into history/ (mode 0700, files 0600), each durably, none over an existing file. */
export function writeHistoryPieces(root: string, pieces: readonly HistoryPiece[]): void {
  if (pieces.length === 0) return;
  const dir = join(root, HISTORY_DIR);
  ensurePrivateDir(dir);
  for (const piece of pieces) {
    if (!/^[a-z][a-z0-9_]*\.\d{12}\.jsonl$/.test(piece.name)) throw new Error(`history piece ${piece.name} has no history file name`);
    const chunks: Uint8Array[] = [];
    for (const line of piece.lines) chunks.push(line, NEWLINE);
    writeNewFileDurable(join(dir, piece.name), Buffer.concat(chunks));
  }
  fsyncDir(dir);
}

const NEWLINE = Buffer.from('\n');

function splitLines(bytes: Buffer): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(10, start);
    const end = nl === -1 ? bytes.length : nl;
    out.push(bytes.subarray(start, end));
    start = end + 1;
  }
  return out;
}
