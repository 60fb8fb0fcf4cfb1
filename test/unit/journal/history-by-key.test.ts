// A history read of one key (`session history`, `session get --at`): of the journal, only its first line and the
// key's lines are read, through the index, and it gives what a read of every record gives for that key — with
// history whole (restatements passed over), history dropped (restatements the oldest versions), and no cache/.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { tempDir } from '../../helpers/cli';
import { historyBytes, historyOf, KEYED } from './history-read';
import { puts } from './fixtures';

const DAY = 86_400_000;
const at = (day: number) => new Date(Date.UTC(2026, 10, 1) + day * DAY).toISOString();

afterEach(() => vi.restoreAllMocks());

/** 400 keys, half of them rewritten, a compaction (history/), then 3,000 more keys, k7 written again and k300 deleted. */
async function store(opts: { dropHistory?: boolean } = {}): Promise<DataDir> {
  const dir = new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 10_000, { keepMs: 3650 * DAY, maxBytes: 1 << 30 });
  const write = (drafts: ReturnType<typeof puts>, day: number) => dir.write(async (tx) => tx.append(KEYED, drafts), at(day));
  await write(puts(400), 0);
  await write(
    puts(200).map((d) => ({ ev: d.ev, data: { id: (d.data as { id: string }).id, value: -1 } })),
    1,
  );
  await dir.compact([KEYED], at(2), undefined, opts);
  for (let i = 0; i < 10; i++) await write(puts(300, 401 + i * 300), 3 + i);
  await write([{ ev: 'item.put', data: { id: 'k7', value: 77 } }], 20);
  await write([{ ev: 'item.deleted', data: { id: 'k300' } }], 21);
  await dir.readKey(KEYED, 'k7');
  return dir;
}

const sizeOf = (dir: DataDir, path: string) => (fs.existsSync(join(dir.root, path)) ? fs.statSync(join(dir.root, path)).size : 0);

describe('a history read by key', () => {
  it('reads, of the journal, only the key lines through the index (a whole read reads every byte)', async () => {
    const dir = await store();
    const journal = sizeOf(dir, KEYED.file);
    const history = historyBytes(dir);
    expect(history).toBeGreaterThan(0);
    const whole = await historyOf(dir, 'k7', false);
    const keyed = await historyOf(dir, 'k7', true);
    expect(keyed.records).toEqual(whole.records);
    expect(whole.bytes).toBeGreaterThanOrEqual(journal + history);
    // The history piece is read whole; of the journal, the index's pages and a few lines.
    expect(keyed.bytes - history).toBeLessThan(journal / 4);
  });

  it('gives what a whole read gives, for every kind of key: restated, rewritten after, deleted, new, never written', async () => {
    for (const dropHistory of [false, true]) {
      const dir = await store({ dropHistory });
      for (const key of ['k1', 'k7', 'k250', 'k300', 'k400', 'k401', 'k1400', 'k9999']) {
        const whole = await historyOf(dir, key, false);
        expect({ key, dropHistory, records: (await historyOf(dir, key, true)).records }).toEqual({ key, dropHistory, records: whole.records });
      }
      // Without cache/, the journal is read whole: the same answer.
      const before = await historyOf(dir, 'k7', true);
      fs.rmSync(join(dir.root, 'cache'), { recursive: true, force: true });
      const after = await historyOf(dir, 'k7', true);
      expect(after.records).toEqual(before.records);
      expect(after.bytes).toBeGreaterThanOrEqual(sizeOf(dir, KEYED.file));
    }
  });
});
