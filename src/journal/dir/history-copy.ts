// A data directory's history/ as `journal copy` moves it: each file a piece, streamed byte for byte.
import { join } from 'node:path';
import { ensurePrivateDir, fsyncDir } from '../../shared/durable-fs';
import { HISTORY_DIR, listHistory } from './history';
import { fileLines, writeNewFileFrom } from './line-stream';
import type { HistoryPiece } from '../core/store-boundary';

/** Journal `file`'s history files, oldest first, each read line by line as it is iterated (without `\n`). */
export function readHistoryPieces(root: string, file: string): HistoryPiece[] {
  return listHistory(root, file).map((h) => ({ name: h.name.slice(HISTORY_DIR.length + 1), lines: fileLines(h.path) }));
}

/** Writes history pieces into history/ (mode 0700, files 0600), each durably and streamed, none over an existing file. */
export async function writeHistoryPieces(root: string, pieces: readonly HistoryPiece[]): Promise<void> {
  if (pieces.length === 0) return;
  const dir = join(root, HISTORY_DIR);
  ensurePrivateDir(dir);
  for (const piece of pieces) {
    if (!/^[a-z][a-z0-9_]*\.\d{12}\.jsonl$/.test(piece.name)) throw new Error(`history piece ${piece.name} has no history file name`);
    await writeNewFileFrom(join(dir, piece.name), piece.lines);
  }
  fsyncDir(dir);
}
