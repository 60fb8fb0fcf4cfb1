// history/: compaction keeps what it drops, each record once; a journal with nothing dead is left alone;
// retention prunes history; check verifies it, across the restatements an archive leaves out.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { HISTORY_DIR, listHistory, pruneHistory } from '../../../src/journal/dir/history';
import { archiveJournal } from '../../../src/journal/dir/history-archive';
import type { JournalRecord } from '../../../src/journal/codec/record';
import { scanJournal } from '../../../src/journal/codec/scan';
import { tempDir } from '../../helpers/cli';
import { ITEM_STORE, puts } from './fixtures';

const DAY = 86_400_000;
const at = (day: number) => new Date(Date.UTC(2026, 10, 1) + day * DAY).toISOString();
const open = (root = join(tempDir(), 'data'), retention = { keepMs: 30 * DAY, maxBytes: 1 << 30 }) => new DataDir(root, { warn: () => {} }, 5_000, retention);
const write = (dir: DataDir, drafts: ReturnType<typeof puts>, ts: string) => dir.write(async (tx) => tx.append(ITEM_STORE, drafts), ts);
const put = (id: string, value: unknown) => [{ ev: 'item.put', data: { id, value } }];
/** The sequence numbers a history file holds, in order. */
const seqsOf = (path: string) => (fs.readFileSync(path, 'utf8').trimEnd().split('\n') as string[]).map((l) => (JSON.parse(l) as JournalRecord).seq);

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
    // Each record once: the second file holds the snapshot and the delete, not the restatements (5, 6) of
    // records the first file holds; check verifies the step over them.
    const [, second] = listHistory(dir.root, ITEM_STORE.file);
    expect(seqsOf(second!.path)).toEqual([4, 7]);
    const [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(5) });
    expect(report!.history).toEqual({ files: 2, records: 5, bytes: expect.any(Number), problems: [] });
    expect(report!.problems).toEqual([]);
  });

  it('a journal with nothing dead is left alone: repeated compactions archive nothing and rewrite nothing', async () => {
    const dir = open();
    await write(dir, puts(50), at(0));
    const journal = join(dir.root, ITEM_STORE.file);
    const original = fs.readFileSync(journal);
    for (let i = 1; i <= 8; i++) {
      const [report] = await dir.compact([ITEM_STORE], at(i));
      expect(report).toEqual({
        name: 'items',
        file: ITEM_STORE.file,
        before: { records: 50, bytes: original.length },
        after: { records: 50, bytes: original.length },
      });
    }
    expect(fs.readFileSync(journal)).toEqual(original);
    expect(fs.existsSync(join(dir.root, HISTORY_DIR))).toBe(false);
    // Once compacted (something was dead), a journal that is only its snapshot and restatements is left alone too.
    await write(dir, put('k1', 'again'), at(9));
    await dir.compact([ITEM_STORE], at(10));
    const compacted = fs.readFileSync(journal);
    const history = listHistory(dir.root, ITEM_STORE.file);
    for (let i = 11; i <= 18; i++) await dir.compact([ITEM_STORE], at(i));
    expect(fs.readFileSync(journal)).toEqual(compacted);
    expect(listHistory(dir.root, ITEM_STORE.file)).toEqual(history);
  });

  it('rounds of writes and compactions: history plus the journal hold every record once, and give back every version', async () => {
    const dir = open();
    const written: [number, unknown][] = [];
    let seq = 0;
    for (let round = 0; round < 6; round++) {
      // New items, an overwrite and (from the second round) a delete: something dies in every round.
      const drafts = [...puts(3, round * 3 + 1), ...put('k1', `r${round}`), ...(round > 0 ? [{ ev: 'item.deleted', data: { id: `k${round * 3 - 1}` } }] : [])];
      await write(dir, drafts, at(round * 2));
      for (const d of drafts) written.push([(seq += 1), (d.data as { value?: unknown }).value]);
      await dir.compact([ITEM_STORE], at(round * 2 + 1));
      // The snapshot and its restatements take seqs of their own.
      seq += 1 + (await dir.read(ITEM_STORE)).size;
    }
    const got = await kept(dir);
    expect(got.map(([s, , v]) => [s, v])).toEqual(written);
    // Every record of history is one of those written or a compaction's snapshot (never a restatement).
    const files = listHistory(dir.root, ITEM_STORE.file);
    const held = files.flatMap((h) => seqsOf(h.path));
    expect(new Set(held).size).toBe(held.length);
    expect(held.length).toBe(written.length + files.length - 1);
    const [report] = await dir.check([ITEM_STORE], { repair: false, ts: at(20) });
    expect(report!.history!.problems).toEqual([]);
  });

  it('a history file verifies across the restatements left out after its snapshot, and nowhere else', async () => {
    const dir = open();
    await write(dir, [...puts(2), ...put('k1', 3)], at(0));
    await dir.compact([ITEM_STORE], at(1));
    await write(dir, [...put('k3', 1), ...put('k3', 2)], at(2));
    await dir.compact([ITEM_STORE], at(3));
    const [, second] = listHistory(dir.root, ITEM_STORE.file);
    const text = fs.readFileSync(second!.path, 'utf8');
    expect(seqsOf(second!.path)).toEqual([4, 7, 8]);
    const scan = (path: string, history: boolean) => scanJournal(path, ITEM_STORE.vocabulary, () => {}, undefined, { history }).problems;
    expect(scan(second!.path, true)).toEqual([]);
    // The same step in a journal is a chain break and a sequence gap.
    const asJournal = join(tempDir(), ITEM_STORE.file);
    fs.writeFileSync(asJournal, text);
    expect(scan(asJournal, false)).toEqual([expect.objectContaining({ line: 2, reason: 'chain break; sequence gap (expected 5, found 7)' })]);
    // A record missing after the step is still a break in history.
    const [first, , third] = text.trimEnd().split('\n');
    fs.writeFileSync(second!.path, `${first}\n${third}\n`);
    expect(scan(second!.path, true)).toEqual([expect.objectContaining({ line: 2, reason: 'chain break; sequence gap (expected 5, found 8)' })]);
  });

  it('--drop-history deletes it, even when nothing is left to compact; the restatements are then the oldest versions left', async () => {
    const dir = open();
    await write(dir, [...puts(2), ...put('k1', 10)], at(0));
    await dir.compact([ITEM_STORE], at(1));
    expect(listHistory(dir.root, ITEM_STORE.file)).toHaveLength(1);
    await dir.compact([ITEM_STORE], at(2), undefined, { dropHistory: true });
    expect(fs.readdirSync(join(dir.root, HISTORY_DIR))).toEqual([]);
    expect(await kept(dir)).toEqual([
      [5, 'item.put', 10],
      [6, 'item.put', 2],
    ]);
    expect((await dir.check([ITEM_STORE], { repair: false, ts: at(3) }))[0]!.history).toBeUndefined();
    // The next compaction archives those restatements with the rest: no history holds them any more.
    await write(dir, put('k2', 20), at(3));
    await dir.compact([ITEM_STORE], at(4));
    expect(listHistory(dir.root, ITEM_STORE.file).map((h) => seqsOf(h.path))).toEqual([[4, 5, 6, 7]]);
  });

  it('a torn tail goes to quarantine, never into history: the history file ends at the last whole record and is kept', async () => {
    const dir = open();
    await write(dir, [...puts(2), ...put('k1', 3)], at(0));
    const journal = join(dir.root, ITEM_STORE.file);
    const whole = fs.readFileSync(journal);
    fs.appendFileSync(journal, '{"v":1,"seq":4,"ts":"2026-');
    await dir.compact([ITEM_STORE], at(1));
    const [history] = listHistory(dir.root, ITEM_STORE.file);
    expect(fs.readFileSync(history!.path)).toEqual(whole);
    expect(await kept(dir)).toEqual([
      [1, 'item.put', 1],
      [2, 'item.put', 2],
      [3, 'item.put', 3],
    ]);
    // Again with restatements to leave out: the copy stops before the tail too.
    await write(dir, put('k2', 20), at(2));
    fs.appendFileSync(journal, '{"v":1,"seq":8,"ts":"2026-');
    await dir.compact([ITEM_STORE], at(3));
    expect(listHistory(dir.root, ITEM_STORE.file).map((h) => seqsOf(h.path))).toEqual([
      [1, 2, 3],
      [4, 7],
    ]);
    expect(fs.readdirSync(join(dir.root, 'quarantine'))).toHaveLength(2);
    expect((await dir.check([ITEM_STORE], { repair: false, ts: at(4) }))[0]!.history!.problems).toEqual([]);
  });

  it('retention: a later compaction deletes history older than keep, and the oldest beyond max bytes', async () => {
    const dir = open(undefined, { keepMs: 10 * DAY, maxBytes: 1 << 30 });
    await write(dir, [...puts(1), ...put('k1', 5)], at(0));
    await dir.compact([ITEM_STORE], at(1)); // items.2: 1, 2
    await write(dir, [...puts(1, 2), ...put('k2', 20)], at(5));
    await dir.compact([ITEM_STORE], at(6)); // items.6: 3, 5, 6
    await write(dir, [...puts(1, 3), ...put('k3', 30)], at(8));
    await dir.compact([ITEM_STORE], at(9)); // items.11: 7, 10, 11
    expect(listHistory(dir.root, ITEM_STORE.file)).toHaveLength(3);
    // Nothing is dead now: the compaction rewrites nothing, and still deletes the file whose newest record is from day 0.
    await dir.compact([ITEM_STORE], at(12));
    const left = listHistory(dir.root, ITEM_STORE.file);
    expect(left.map((h) => h.name)).toEqual([join(HISTORY_DIR, 'items.000000000006.jsonl'), join(HISTORY_DIR, 'items.000000000011.jsonl')]);
    // Without the history its first restatements repeated, those are gone with it (k1's 5 at seq 4); the
    // journal's restatements are then the oldest versions left of what only they hold.
    expect(await kept(dir)).toEqual([
      [5, 'item.put', 2],
      [6, 'item.put', 20],
      [10, 'item.put', 3],
      [11, 'item.put', 30],
      [13, 'item.put', 5],
      [14, 'item.put', 20],
      [15, 'item.put', 30],
    ]);
    const total = left.reduce((s, h) => s + h.bytes, 0);
    expect(pruneHistory(dir.root, { keepMs: 100 * DAY, maxBytes: total - 1 }, Date.parse(at(12)))).toEqual([left[0]!.name]);
    expect(pruneHistory(dir.root, { keepMs: 100 * DAY, maxBytes: 0 }, Date.parse(at(12)))).toEqual([left[1]!.name]);
  });

  it('journal check finds a flipped byte and a broken link between files; --repair quarantines the damaged file', async () => {
    const dir = open();
    await write(dir, [...puts(3), ...put('k1', 30)], at(0));
    await dir.compact([ITEM_STORE], at(1));
    await write(dir, [...puts(1, 9), ...put('k9', 90)], at(2));
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
    await write(dir, put('k1', 3), at(1));
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

  it('a copy left out of its restatements by a compaction that crashed before its rename is never read as history', async () => {
    const dir = open();
    await write(dir, [...puts(2), ...put('k1', 3)], at(0));
    await dir.compact([ITEM_STORE], at(1)); // items.3; the journal: 4 (snapshot), 5, 6 (restatements)
    await write(dir, put('k2', 7), at(2));
    const before = await kept(dir);
    // What the next compaction archives before its rename, and then a crash: the journal is still the old one.
    archiveJournal(
      dir.root,
      ITEM_STORE.file,
      { seq: 7, h: 'x' },
      { leaveOut: { fromLine: 2, toLine: 3 }, end: fs.statSync(join(dir.root, ITEM_STORE.file)).size },
    );
    expect(fs.readdirSync(join(dir.root, HISTORY_DIR)).sort()).toEqual(['items.000000000003.jsonl', 'items.000000000007.jsonl']);
    expect(listHistory(dir.root, ITEM_STORE.file).map((h) => h.name)).toEqual([join(HISTORY_DIR, 'items.000000000003.jsonl')]);
    expect(await kept(dir)).toEqual(before);
    expect((await dir.check([ITEM_STORE], { repair: false, ts: at(3) }))[0]!.history!.problems).toEqual([]);
    // The compaction run again replaces it, and a copy a crash cut short before its rename.
    fs.writeFileSync(join(dir.root, HISTORY_DIR, '.items.000000000005.jsonl.partial'), '{"v":1,"seq":4');
    await write(dir, put('k2', 8), at(3));
    await dir.compact([ITEM_STORE], at(4));
    expect(fs.readdirSync(join(dir.root, HISTORY_DIR)).sort()).toEqual(['items.000000000003.jsonl', 'items.000000000008.jsonl']);
    expect(await kept(dir)).toEqual([...before, [8, 'item.put', 8]]);
    expect((await dir.check([ITEM_STORE], { repair: false, ts: at(5) }))[0]!.history!.problems).toEqual([]);
  });
});
