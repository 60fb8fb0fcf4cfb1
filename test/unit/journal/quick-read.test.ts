// The get's quick read (journal/dir/quick-read.ts): through an index that verifies it answers as a data directory's
// readKey does; anywhere else it hands the read on and leaves every file as it found it (the full program then
// meets the store as it is). End to end, over bin/crux: test/e2e/fast-path.test.ts.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { HandOn, QuickReadDir } from '../../../src/journal/dir/quick-read';
import { encodeRecords } from '../../../src/journal/codec/record';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { CASE_STORE } from '../../../src/domain/case/store';
import { ITEM_STORE, puts } from './fixtures';
import { snapshotDir, tempDir } from '../../helpers/cli';

const KEYED = { ...ITEM_STORE, keyOf: (r: { data: { id?: string } }) => r.data.id } as typeof ITEM_STORE;
const TS = '2026-12-01T00:00:00.000Z';
const quiet = { warn: () => {} };

/** A data directory with 40 keys written in four transactions (an index base and a log), and its index built. */
async function store(): Promise<string> {
  const dir = join(tempDir(), 'data');
  const data = new DataDir(dir, quiet, 10_000);
  for (let batch = 0; batch < 4; batch++) await data.write(async (tx) => tx.append(KEYED, puts(10, batch * 10 + 1)), TS);
  await data.readKey(KEYED, 'k1');
  return dir;
}

/** Every file's name and bytes, and its mtime: a quick read changes none of them. */
const everything = (dir: string) =>
  Object.fromEntries(Object.entries(snapshotDir(dir)).map(([name, sum]) => [name, `${sum} ${fs.statSync(join(dir, name)).mtimeMs}`]));

async function outcome(dir: string, key: string): Promise<Map<string, unknown> | 'handed on'> {
  try {
    return await new QuickReadDir(dir).readKey(KEYED, key);
  } catch (error) {
    if (error instanceof HandOn) return 'handed on';
    throw error;
  }
}

describe('the quick read', () => {
  it('answers a key through a verified index as readKey does, present or not', async () => {
    const dir = await store();
    const full = new DataDir(dir, quiet, 10_000);
    for (const key of ['k1', 'k17', 'k40', 'k41', 'nope']) {
      expect((await outcome(dir, key)) as Map<string, unknown>, key).toEqual(await full.readKey(KEYED, key));
    }
    expect(await outcome(dir, 'k23')).toEqual(new Map([['k23', 23]]));
  });

  it('reads a whole store without a snapshot by a replay, as read does, where the index covers the journal', async () => {
    const dir = await store();
    const before = everything(dir);
    expect(await new QuickReadDir(dir).read(KEYED)).toEqual(await new DataDir(dir, quiet, 10_000).read(KEYED));
    expect(everything(dir)).toEqual(before);
    // Where a replaying reader would report or write (the index again), it hands on instead, touching nothing.
    for (const [what, damage] of [
      ['cache/ lost', (d: string) => fs.rmSync(join(d, 'cache'), { recursive: true })],
      ['a line changed', (d: string) => rewrite(join(d, 'items.jsonl'), (t) => t.replace('"value":23', '"value":93'))],
      ['a torn tail', (d: string) => fs.appendFileSync(join(d, 'items.jsonl'), '{"v":1,"seq":41,"ts":')],
      ['the journal past the index', (d: string) => farPast(d)],
    ] as const) {
      const damaged = await store();
      damage(damaged);
      const untouched = everything(damaged);
      await expect(new QuickReadDir(damaged).read(KEYED), what).rejects.toThrow(HandOn);
      expect(everything(damaged), what).toEqual(untouched);
    }
  });

  it('hands on, touching nothing, where a read would rebuild, repair, report or fill in', async () => {
    const damages: [string, (dir: string) => void][] = [
      ['cache/ lost', (d) => fs.rmSync(join(d, 'cache'), { recursive: true })],
      ['the manifest flipped', (d) => flipAt(join(d, 'cache', 'items.jsonl.idx'), 40)],
      [
        'the base pages flipped',
        (d) => {
          for (const f of baseRuns(d)) flipPages(f);
        },
      ],
      ['a line the index names changed', (d) => rewrite(join(d, 'items.jsonl'), (t) => t.replace('"value":23', '"value":93'))],
      ['a torn tail', (d) => fs.appendFileSync(join(d, 'items.jsonl'), '{"v":1,"seq":41,"ts":')],
      ['the journal far past the index', (d) => farPast(d)],
      ['the journal a directory', (d) => rewrite(join(d, 'items.jsonl'), () => undefined)],
    ];
    for (const [what, damage] of damages) {
      const dir = await store();
      damage(dir);
      const before = everything(dir);
      expect(await outcome(dir, 'k23'), what).toBe('handed on');
      expect(everything(dir), what).toEqual(before);
    }
  });

  it('reads a store not made yet as empty, and hands on a path it cannot read', async () => {
    const nowhere = join(tempDir(), 'none', 'data');
    expect(await outcome(nowhere, 'k1')).toEqual(new Map());
    expect(fs.existsSync(join(nowhere, '..'))).toBe(false);
    const file = join(tempDir(), 'a-file');
    fs.writeFileSync(file, 'x');
    expect(await outcome(file, 'k1')).toBe('handed on');
  });

  it('hands every other read and every write on', async () => {
    const dir = await store();
    const quick: JournalStore = new QuickReadDir(dir);
    const before = everything(dir);
    const calls: [string, () => unknown][] = [
      ['read of a store with a snapshot', () => quick.read(CASE_STORE)],
      ['readWith', () => quick.readWith(KEYED, (s) => s)],
      ['readTerms', () => quick.readTerms(KEYED, { terms: ['x'] }, (s) => s)],
      ['readAt', () => quick.readAt(KEYED, [])],
      ['readHistory', () => quick.readHistory(KEYED, () => {})],
      ['write', () => quick.write(async (tx) => tx.append(KEYED, puts(1)), TS)],
      ['check', () => quick.check([KEYED], { repair: true, ts: TS })],
      ['compact', () => quick.compact([KEYED], TS)],
      ['survey', () => quick.survey([KEYED])],
      ['init', () => quick.init({ print: false })],
      ['keys', () => quick.keys.read('handoff.key')],
    ];
    for (const [name, call] of calls) await expect((async () => call())(), name).rejects.toThrow(HandOn);
    expect(everything(dir)).toEqual(before);
  });
});

function flipAt(file: string, at: number): void {
  const bytes = fs.readFileSync(file);
  bytes[at] = bytes[at]! ^ 0x20;
  fs.writeFileSync(file, bytes);
}

/** Every page of a base run past its header, flipped. */
function flipPages(file: string): void {
  // A run is its pages (index format v7: no header page), each flipped.
  for (let at = 64; at < fs.statSync(file).size; at += 4096) flipAt(file, at);
}

const baseRuns = (dir: string) =>
  fs
    .readdirSync(join(dir, 'cache'))
    .filter((f) => /^items\.jsonl\.idx\.[0-9a-f]+$/.test(f))
    .map((f) => join(dir, 'cache', f));

/** Rewrites a file's text; undefined puts a directory in its place. */
function rewrite(file: string, change: (text: string) => string | undefined): void {
  const text = change(fs.readFileSync(file, 'utf8'));
  if (text === undefined) {
    fs.rmSync(file);
    fs.mkdirSync(file);
  } else fs.writeFileSync(file, text);
}

/** Appends ~300 KB of records to the journal past the index, as a writer's lines that no index holds yet. */
function farPast(dir: string): void {
  const path = join(dir, 'items.jsonl');
  const last = JSON.parse(fs.readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!) as { seq: number; h: string };
  const drafts = Array.from({ length: 100 }, (_, i) => ({ ev: 'item.put', data: { id: `k${i + 1}`, value: 'x'.repeat(3000) } }));
  fs.appendFileSync(path, encodeRecords({ seq: last.seq, h: last.h }, drafts, TS).text);
}
