// Automatic compaction by one rule on both kinds of store (policy.ts, compactionDue): a journal past the size
// whose live records need at most half of it is compacted by the write that takes it there; answers stay the
// same, history keeps every record, check is healthy; on PostgreSQL, writers on other connections during it lose
// nothing, and a journal whose statistics row is gone is counted afresh.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { COMPACT_MIN_BYTES } from '../../../src/journal/core/policy';
import { SNAPSHOT_EVENT } from '../../../src/journal/codec/verify';
import { declareVocabulary, type StoreSpec } from '../../../src/journal/codec/store-spec';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { FULL, STORE_KINDS, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';

/**
 * A note's padding: 4 KB in `npm test`, so that a journal passes the rule's size (COMPACT_MIN_BYTES, 256 KiB) after
 * ~64 puts; 1 KB in CI's run (FULL), ~4 times the puts and the writers' interleavings for the same bytes.
 */
const PAD = 'p'.repeat(FULL ? 1000 : 4000);
/** Notes of ~PAD bytes each, by id; every put replaces the note (and resets the entity): old puts are dead. */
const NOTES: StoreSpec<Map<string, number>> = {
  file: 'notes.jsonl',
  vocabulary: declareVocabulary(['note.put']),
  initial: () => new Map(),
  evolve(state, record) {
    if (record.ev === 'note.put') state.set(record.data.id, record.data.n);
  },
  live: (state) => [...state].map(([id, n]) => ({ ev: 'note.put', data: { id, n, pad: PAD } })),
  keyOf: (record) => record.data?.id,
  resets: () => true,
};
const TS = '2026-12-01T09:00:00.000Z';
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});
const warnings: string[] = [];

function openPg(url: string): PgStore {
  const store = new PgStore(parseStoreUrl(url), { reporter: { warn: (m) => warnings.push(m) }, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [NOTES] });
  opened.push(store);
  return store;
}
const open = (kind: StoreKind): JournalStore =>
  kind === 'dir' ? new DataDir(join(tempDir(), 'data'), { warn: (m) => warnings.push(m) }, 10_000) : openPg(freshStoreUrl('autoc'));

/** One command's write: the note `id` set to `n`, loaded by key as `session put` loads its session. */
const put = (store: JournalStore, id: string, n: number) =>
  store.write(async (tx) => {
    await tx.loadKey(NOTES, id);
    tx.append(NOTES, [{ ev: 'note.put', data: { id, n, pad: PAD } }]);
  }, TS);

async function firstRecord(store: JournalStore): Promise<{ ev: string; data: any } | undefined> {
  for await (const line of store.rawLines(NOTES.file)) return JSON.parse(Buffer.from(line).toString());
  return undefined;
}
async function lineCount(store: JournalStore): Promise<number> {
  let n = 0;
  for await (const _ of store.rawLines(NOTES.file)) n += 1;
  return n;
}
async function journalBytes(store: JournalStore): Promise<number> {
  let n = 0;
  for await (const line of store.rawLines(NOTES.file)) n += line.length + 1;
  return n;
}

describe.each(STORE_KINDS)('automatic compaction on a %s store', (kind) => {
  it('compacts the journal on the write that takes it past the rule, keeping answers, history and a healthy check', async () => {
    const store = open(kind);
    // 10 notes rewritten over and over: ~4.1 KB a record (1.1 KB in CI), so the journal passes COMPACT_MIN_BYTES
    // after ~64 writes (~230), when 10 of them are live.
    let compactedAt: number | undefined;
    let bytes = 0;
    for (let i = 0; i < 300 && compactedAt === undefined; i++) {
      const before = bytes;
      await put(store, `n${i % 10}`, i);
      if ((await firstRecord(store))?.ev === SNAPSHOT_EVENT) {
        compactedAt = i + 1;
        // The write that took the journal past the rule's size (its 10 live notes are far below half of it),
        // not one before: the journal was just under the size before it.
        const record = (await journalBytes(store)) / (await lineCount(store));
        expect(before + record).toBeGreaterThanOrEqual(COMPACT_MIN_BYTES);
        expect(before).toBeLessThan(COMPACT_MIN_BYTES);
      } else bytes = await journalBytes(store);
    }
    expect(compactedAt, 'the journal was compacted by a write').toBeDefined();
    expect(await lineCount(store)).toBeLessThanOrEqual(11);
    const want = new Map(Array.from({ length: 10 }, (_, k) => [`n${k}`, compactedAt! - 1 - ((compactedAt! - 1 - k) % 10)]));
    expect(await store.read(NOTES)).toEqual(want);
    let history = 0;
    await store.readHistory(NOTES, (record) => {
      if (record.ev === 'note.put') history += 1;
    });
    expect(history).toBe(compactedAt);
    const [checked] = await store.check([NOTES], { repair: false, ts: TS });
    expect(checked).toMatchObject({ problems: [], history: { files: 1, problems: [] } });
    expect(checked!.derived).toBeUndefined();
  });
});

describe.skipIf(pgSkipReason() !== undefined)('automatic compaction on PostgreSQL', () => {
  it('writers on other connections during compactions lose nothing: every acknowledged put is in the answer and in history', async () => {
    const url = freshStoreUrl('autoc');
    const writers = Array.from({ length: 4 }, () => openPg(url));
    // npm test: 4 × 20 records of ~4.1 KB (~330 KB), past the rule (COMPACT_MIN_BYTES, 256 KiB) once at least; CI's
    // run and the stress run: 4 × 150 of ~1.1 KB (~660 KB), past it twice at least, a compaction on a compacted journal.
    const each = FULL ? 150 : 20;
    const compactions = FULL ? 2 : 1;
    const acknowledged = new Map<string, number>();
    let puts = 0;
    await Promise.all(
      writers.map(async (store, w) => {
        for (let i = 0; i < each; i++) {
          const id = `w${w}-${i % 3}`;
          await put(store, id, i);
          acknowledged.set(id, i);
          puts += 1;
        }
      }),
    );
    const reader = openPg(url);
    expect(await reader.read(NOTES)).toEqual(acknowledged);
    const seen = new Set<string>();
    await reader.readHistory(NOTES, (record) => {
      if (record.ev === 'note.put') seen.add(`${record.data.id}#${record.data.n}`);
    });
    expect(seen.size).toBe(puts);
    const schema = new URL(url).searchParams.get('schema');
    const generations = Number(psql(`select count(distinct generation) from ${schema}.history`).trim());
    expect(generations).toBeGreaterThanOrEqual(compactions);
    const [checked] = await reader.check([NOTES], { repair: false, ts: TS });
    expect(checked).toMatchObject({ problems: [], history: { files: generations, problems: [] } });
  });

  it('counts a journal afresh when its statistics row is gone or wrong, and still compacts by the rule', async () => {
    const url = freshStoreUrl('autoc');
    const store = openPg(url);
    const schema = new URL(url).searchParams.get('schema');
    // ~100 KB, under the rule's size: 25 puts (100 in CI).
    const before = Math.round(100_000 / PAD.length);
    for (let i = 0; i < before; i++) await put(store, `n${i % 10}`, i);
    expect((await firstRecord(store))?.ev).not.toBe(SNAPSHOT_EVENT);
    psql(`delete from ${schema}.journal_stats`);
    await put(store, 'n0', before);
    const [row] = psql(`select bytes, live from ${schema}.journal_stats`).trim().split('\n');
    const [bytes, live] = row!.split('|').map(Number);
    const actual = Number(psql(`select sum(octet_length(body) + 1) from ${schema}.journal_notes`).trim());
    expect(bytes).toBe(actual);
    expect(live).toBeGreaterThan(10 * PAD.length);
    expect(live).toBeLessThan(10 * (PAD.length + 200));
    // A wrong count (bound to another head) is not trusted either: the next write counts again.
    psql(`update ${schema}.journal_stats set bytes = 1, h = 'x'`);
    for (let i = before + 1; i < 300 && (await firstRecord(store))?.ev !== SNAPSHOT_EVENT; i++) await put(store, `n${i % 10}`, i);
    expect((await firstRecord(store))?.ev).toBe(SNAPSHOT_EVENT);
  });

  it('an automatic compaction that finds nothing dead counts the journal as all live, bound to its head', async () => {
    const url = freshStoreUrl('autoc');
    const store = openPg(url);
    const schema = new URL(url).searchParams.get('schema');
    for (let i = 0; i < 5; i++) await put(store, `d${i}`, i);
    // A row that says the journal is large and dead (bound to its head): the next write compacts, and finds every note live.
    psql(`update ${schema}.journal_stats set bytes = 10000000, live = 0`);
    await put(store, 'd5', 5);
    expect((await firstRecord(store))?.ev).toBe('note.put');
    const actual = Number(psql(`select sum(octet_length(body) + 1) from ${schema}.journal_notes`).trim());
    const head = psql(`select line || '|' || h from ${schema}.journal_notes order by line desc limit 1`).trim();
    expect(psql(`select bytes || '|' || live || '|' || line || '|' || h from ${schema}.journal_stats`).trim()).toBe(`${actual}|${actual}|${head}`);
  });
});
