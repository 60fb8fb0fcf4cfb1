// What the history-by-key tests share: a keyed item store, and a history read of one key that counts the bytes read.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { vi } from 'vitest';
import type { DataDir } from '../../../src/journal/dir/data-dir';
import type { JournalRecord } from '../../../src/journal/codec/record';
import { ITEM_STORE } from './fixtures';

/** The item store with a key per entity (its id): read by key through the index. */
export const KEYED = { ...ITEM_STORE, keyOf: (r: { data: { id?: string } }) => r.data.id } as typeof ITEM_STORE;

// The module object crux's own `fs` calls go through (an ES import's namespace cannot be spied on).
const nodeFs = createRequire(import.meta.url)('node:fs') as typeof fs;

/** The key's records a history read gives (with `key`: read by key), and the bytes it read. */
export async function historyOf(dir: DataDir, key: string, byKey: boolean): Promise<{ records: [number, string, unknown][]; bytes: number }> {
  let bytes = 0;
  const read = nodeFs.readSync;
  vi.spyOn(nodeFs, 'readSync').mockImplementation(((...args: Parameters<typeof read>) => {
    const n = read(...args);
    bytes += n;
    return n;
  }) as typeof read);
  const records: [number, string, unknown][] = [];
  try {
    await dir.readHistory(KEYED, (r: JournalRecord) => r.data?.id === key && records.push([r.seq, r.ev, r.data.value]), byKey ? { key } : {});
  } finally {
    vi.restoreAllMocks();
  }
  return { records, bytes };
}

/** The bytes of every file in a data directory's history/ (0 without one). */
export const historyBytes = (dir: DataDir): number => {
  const at = join(dir.root, 'history');
  return fs.existsSync(at) ? fs.readdirSync(at).reduce((n, f) => n + fs.statSync(join(at, f)).size, 0) : 0;
};
