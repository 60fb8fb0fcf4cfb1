// Hand-made journals for replay and check tests.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { encodeRecords, EMPTY_HEAD, type EventDraft } from '../../../src/journal/codec/record';
import { declareVocabulary, type StoreSpec } from '../../../src/journal/codec/store-spec';
import { tempDir } from '../../helpers/cli';

export const VOCAB = declareVocabulary(['item.put', 'item.deleted']);

/** A toy store: id → value, for testing the journal layer without any real store. */
export const ITEM_STORE: StoreSpec<Map<string, unknown>> = {
  file: 'items.jsonl',
  vocabulary: VOCAB,
  initial: () => new Map(),
  evolve(state, record) {
    if (record.ev === 'item.put') state.set(record.data.id, record.data.value);
    else if (record.ev === 'item.deleted') state.delete(record.data.id);
  },
  live: (state) => [...state].map(([id, value]) => ({ ev: 'item.put', data: { id, value } })),
  liveBytes: (state) => state.size * 120,
};

export const puts = (n: number, from = 1): EventDraft[] =>
  Array.from({ length: n }, (_, i) => ({ ev: 'item.put', data: { id: `k${from + i}`, value: from + i } }));

export function journalText(n: number): string {
  return encodeRecords(EMPTY_HEAD, puts(n), '2026-11-29T21:00:00.000Z').text;
}

export function writeJournal(text: string | Buffer): { dir: string; path: string } {
  const dir = tempDir();
  const path = join(dir, ITEM_STORE.file);
  fs.writeFileSync(path, text);
  return { dir, path };
}

export const lines = (text: string) => text.split('\n').slice(0, -1);
