// history/: compaction keeps the old journal, chain intact; retention prunes it; check verifies it.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/data-dir';
import { HISTORY_DIR, listHistory, pruneHistory } from '../../../src/journal/history';
import type { JournalRecord } from '../../../src/journal/record';
import { tempDir } from '../../helpers/cli';
import { ITEM_STORE, puts } from './fixtures';

const DAY = 86_400_000;
const at = (day: number) => new Date(Date.UTC(2026, 10, 1) + day * DAY).toISOString();
const open = (root = join(tempDir(), 'data'), retention = { keepMs: 30 * DAY, maxBytes: 1 << 30 }) => new DataDir(root, { warn: () => {} }, 5_000, retention);
const write = (dir: DataDir, drafts: ReturnType<typeof puts>, ts: string) => dir.write(async (tx) => tx.append(ITEM_STORE, drafts), ts);

async function kept(dir: DataDir): Promise<[number, string, unknown][]> {
  const out: [number, string, unknown][] = [];
  await dir.readHistory(ITEM_STORE, (r: JournalRecord) => out.push([r.seq, r.ev, r.data.value]));
  return out;
}

describe('history/', () => {
  it('keeps what compaction drops; readHistory gives every record once, restatements passed over', async () => {
    const dir = open();
    await write(dir, puts(2), at(0));
    await write(dir, [{ ev: 'item.put', data: { id: 'k1', value: 10 } }], at(1));
    await dir.compact([ITEM_STORE], at(2));
    await write(dir, [{ ev: 'item.deleted', data: { id: 'k2' } }], at(3));
    await dir.compact([ITEM_STORE], at(4));
    expect(listHistory(dir.root, ITEM_STORE.file).map((h) => h.name)).toEqual([
      join(HISTORY_DIR, 'items.000000000003.jsonl'),
      join(HISTORY_DIR, 'items.000000000007.jsonl'),
    ]);
    expect(await kept(dir)).toEqual([
      [1, 'item.put', 1],
      [2, 'item.put', 2],
      [3, 'item.put', 10],
      [7, 'item.deleted', undefined],
    ]);
    expect([...(await dir.read(ITEM_STORE))]).toEqual([['k1', 10]]);
    const [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(5) });
    expect(report!.history).toEqual({ files: 2, records: 7, bytes: expect.any(Number), problems: [] });
  });

  it('--drop-history deletes it; the restatements are then the oldest versions left', async () => {
    const dir = open();
    await write(dir, puts(2), at(0));
    await dir.compact([ITEM_STORE], at(1));
    await dir.compact([ITEM_STORE], at(2), undefined, { dropHistory: true });
    expect(fs.readdirSync(join(dir.root, HISTORY_DIR))).toEqual([]);
    expect(await kept(dir)).toEqual([
      [7, 'item.put', 1],
      [8, 'item.put', 2],
    ]);
    expect((await dir.check([ITEM_STORE], { repair: false, ts: at(3) }))[0]!.history).toBeUndefined();
  });

  it('retention: a later compaction deletes history older than keep, and the oldest beyond max bytes', async () => {
    const dir = open(undefined, { keepMs: 10 * DAY, maxBytes: 1 << 30 });
    await write(dir, puts(1), at(0));
    await dir.compact([ITEM_STORE], at(1));
    await write(dir, puts(1, 2), at(5));
    await dir.compact([ITEM_STORE], at(6));
    expect(listHistory(dir.root, ITEM_STORE.file)).toHaveLength(2);
    await dir.compact([ITEM_STORE], at(12)); // the first file's newest record is from day 1
    const left = listHistory(dir.root, ITEM_STORE.file);
    expect(left.map((h) => h.name)).toEqual([join(HISTORY_DIR, 'items.000000000004.jsonl'), join(HISTORY_DIR, 'items.000000000007.jsonl')]);
    const total = left.reduce((s, h) => s + h.bytes, 0);
    expect(pruneHistory(dir.root, { keepMs: 100 * DAY, maxBytes: total - 1 }, Date.parse(at(12)))).toEqual([left[0]!.name]);
    expect(pruneHistory(dir.root, { keepMs: 100 * DAY, maxBytes: 0 }, Date.parse(at(12)))).toEqual([left[1]!.name]);
  });

  it('journal check finds a flipped byte and a broken link between files; --repair quarantines the damaged file', async () => {
    const dir = open();
    await write(dir, puts(3), at(0));
    await dir.compact([ITEM_STORE], at(1));
    await write(dir, puts(1, 9), at(2));
    await dir.compact([ITEM_STORE], at(3));
    const [older, newer] = listHistory(dir.root, ITEM_STORE.file);
    const bytes = fs.readFileSync(older!.path);
    bytes[40]! ^= 1;
    fs.writeFileSync(older!.path, bytes);
    let [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(4) });
    expect(report!.history!.problems).toEqual([expect.objectContaining({ file: older!.name, line: 1 })]);
    [report] = await dir.check([ITEM_STORE], { repair: true, ts: at(4) });
    expect(report!.history!.quarantined).toHaveLength(1);
    [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(4) });
    expect(report!.history).toEqual({ files: 1, records: expect.any(Number), bytes: newer!.bytes, problems: [] });
    // A history file that does not continue the one before it is a chain break.
    fs.copyFileSync(newer!.path, join(dir.root, HISTORY_DIR, 'items.000000000001.jsonl'));
    [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(4) });
    expect(report!.history!.problems).toEqual([expect.objectContaining({ reason: expect.stringMatching(/chain break/) })]);
  });

  it('a link left by a compaction that crashed before its rename is still the journal: never read as history', async () => {
    const dir = open();
    await write(dir, puts(2), at(0));
    fs.mkdirSync(join(dir.root, HISTORY_DIR), { mode: 0o700 });
    fs.linkSync(join(dir.root, ITEM_STORE.file), join(dir.root, HISTORY_DIR, 'items.000000000002.jsonl'));
    await write(dir, puts(1, 3), at(1));
    expect(listHistory(dir.root, ITEM_STORE.file)).toEqual([]);
    expect(await kept(dir)).toEqual([
      [1, 'item.put', 1],
      [2, 'item.put', 2],
      [3, 'item.put', 3],
    ]);
    await dir.compact([ITEM_STORE], at(2));
    expect(fs.readdirSync(join(dir.root, HISTORY_DIR))).toEqual(['items.000000000003.jsonl']);
    expect(await kept(dir)).toEqual([
      [1, 'item.put', 1],
      [2, 'item.put', 2],
      [3, 'item.put', 3],
    ]);
  });
});
