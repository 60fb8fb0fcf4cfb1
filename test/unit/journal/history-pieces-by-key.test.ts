// A history read of one key over compacted history (issue 47): each history piece through its key index (cache/
// history/<piece>.keys, made from the piece read whole and verified), so that a read costs the key's records, not
// every piece — and it gives what a read of every record gives, with the index missing, stale or forged.
import { execFileSync } from 'node:child_process';
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

const HISTORY = { keepMs: 3650 * DAY, maxBytes: 1 << 30 };

/** Three compactions of 2,000 keys written and rewritten (three history pieces), then a few writes. */
async function build(): Promise<string> {
  const warnings: string[] = [];
  const dir = new DataDir(join(tempDir(), 'data'), { warn: (m) => warnings.push(m) }, 10_000, HISTORY);
  const write = (drafts: ReturnType<typeof puts>, day: number) => dir.write(async (tx) => tx.append(KEYED, drafts), at(day));
  for (let round = 0; round < 3; round++) {
    await write(puts(2000), round * 3);
    await write(
      puts(500, 1 + round * 500).map((d) => ({ ev: d.ev, data: { id: (d.data as { id: string }).id, value: -round } })),
      round * 3 + 1,
    );
    if (round === 1) await write([{ ev: 'item.deleted', data: { id: 'k9' } }], round * 3 + 1);
    await dir.compact([KEYED], at(round * 3 + 2));
  }
  await write([{ ev: 'item.put', data: { id: 'k7', value: 77 } }], 20);
  await dir.readKey(KEYED, 'k7');
  expect(warnings).toEqual([]);
  return dir.root;
}

let built: Promise<string> | undefined;
/**
 * The store, built once for the file and copied for each test by `cp -a`, which keeps the journal's mtime to the
 * nanosecond (a derived file is bound to it): no history piece of it read by key yet.
 */
async function store(warnings: string[] = []): Promise<DataDir> {
  built ??= build();
  const root = join(tempDir(), 'data');
  execFileSync('cp', ['-a', await built, root]);
  return new DataDir(root, { warn: (m) => warnings.push(m) }, 10_000, HISTORY);
}

const pieces = (dir: DataDir) => fs.readdirSync(join(dir.root, 'history')).map((f) => join(dir.root, 'history', f));
const KEYS = ['k1', 'k7', 'k9', 'k600', 'k1499', 'k2000', 'k9999'];

describe('a history read by key over history pieces', () => {
  it('reads each piece through its key index: a read costs the key, and gives what a whole read gives', async () => {
    const dir = await store();
    expect(pieces(dir).length).toBeGreaterThanOrEqual(3);
    const history = historyBytes(dir);
    // The first read by key makes the indexes (each piece read whole once).
    for (const key of KEYS) {
      const whole = await historyOf(dir, key, false);
      expect(whole.bytes).toBeGreaterThan(history);
      expect({ key, records: (await historyOf(dir, key, true)).records }).toEqual({ key, records: whole.records });
    }
    for (const key of KEYS) {
      const keyed = await historyOf(dir, key, true);
      expect({ key, records: keyed.records }).toEqual({ key, records: (await historyOf(dir, key, false)).records });
      expect(keyed.bytes, key).toBeLessThan(history / 10);
    }
  });

  it('an index missing, forged or of another piece is made again or passed over: the same answer', async () => {
    const warnings: string[] = [];
    const dir = await store(warnings);
    const want = await historyOf(dir, 'k7', false);
    await historyOf(dir, 'k7', true);
    const indexes = join(dir.root, 'cache', 'history');
    const files = fs.readdirSync(indexes).map((f) => join(indexes, f));
    expect(files).toHaveLength(pieces(dir).length);
    // Missing: made again.
    fs.rmSync(files[0]!);
    expect((await historyOf(dir, 'k7', true)).records).toEqual(want.records);
    expect(fs.existsSync(files[0]!)).toBe(true);
    // Another piece's index: its size and lines do not verify; made again.
    fs.copyFileSync(files[1]!, files[2]!);
    expect((await historyOf(dir, 'k7', true)).records).toEqual(want.records);
    // A forged one pointing k7 at another key's line: that record is not k7's, so the piece is read whole.
    const text = fs.readFileSync(files[0]!, 'utf8').split('\n');
    const k7 = text.findIndex((l) => l.startsWith('"k7"\t'));
    const k8 = text.find((l) => l.startsWith('"k8"\t'))!;
    text[k7] = `"k7"\t${k8.split('\t')[1]}`;
    fs.writeFileSync(files[0]!, text.join('\n'));
    expect((await historyOf(dir, 'k7', true)).records).toEqual(want.records);
    expect(warnings).toEqual([]);
  });

  it('a damaged piece gets no index: read whole, its damage told as a whole read tells it', async () => {
    const warnings: string[] = [];
    const dir = await store(warnings);
    const piece = pieces(dir)[1]!;
    const bytes = fs.readFileSync(piece);
    const at = bytes.indexOf('"k600"');
    bytes.write('"k601"', at);
    fs.writeFileSync(piece, bytes);
    const whole = await historyOf(dir, 'k7', false);
    const told = warnings.splice(0);
    expect(told.length).toBeGreaterThan(0);
    const keyed = await historyOf(dir, 'k7', true);
    expect(keyed.records).toEqual(whole.records);
    expect(warnings).toEqual(told);
    expect(fs.readdirSync(join(dir.root, 'cache', 'history')).some((f) => piece.endsWith(f.replace(/\.keys$/, '')))).toBe(false);
  });
});
