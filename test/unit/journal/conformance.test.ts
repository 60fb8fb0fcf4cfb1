// The JournalStore contract (store-boundary.ts), one suite over both kinds of store: transactions and their
// refusals, reads by key and whole, check and compaction with history, the key store, copy's enumeration and
// restore, the consistent view and init. A kind of store passes this or it is not a store.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { HistoryPiece, JournalStore } from '../../../src/journal/core/store-boundary';
import type { EventDraft } from '../../../src/journal/codec/record';
import { ENGINES, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl } from '../../helpers/pg';
import { ITEM_STORE, puts } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';
const KEYED = { ...ITEM_STORE, keyOf: (r: { data: { id?: string } }) => r.data.id };
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

function open(kind: StoreKind): JournalStore {
  if (kind === 'dir') return new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
  const store = new PgStore(parseStoreUrl(freshStoreUrl('conf')), {
    reporter: { warn: () => {} },
    lockTimeoutMs: 5_000,
    cruxVersion: 'test',
    specs: [ITEM_STORE, KEYED as typeof ITEM_STORE],
  });
  opened.push(store);
  return store;
}
const write = (store: JournalStore, drafts: EventDraft[]) =>
  store.write(async (tx) => {
    await tx.load(ITEM_STORE);
    tx.append(ITEM_STORE, drafts);
  }, TS);
/** Every line of a stream (a view's lines are read while the view is open). */
async function collect(lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const line of lines) out.push(line);
  return out;
}
const pieces = async (history: Promise<HistoryPiece[]>) => Promise.all((await history).map(async (p) => ({ name: p.name, lines: await collect(p.lines) })));
const keysOf = async (store: JournalStore) => [...(await store.read(ITEM_STORE)).keys()];

describe.each(ENGINES)('the JournalStore contract on a %s store', (kind) => {
  it('a store that was never written reads empty, checks healthy, and a refused write leaves no trace', async () => {
    const store = open(kind);
    expect(await keysOf(store)).toEqual([]);
    expect((await store.check([ITEM_STORE], { repair: false, ts: TS }))[0]).toMatchObject({ records: 0, problems: [] });
    await expect(
      store.write(async (tx) => {
        tx.append(ITEM_STORE, puts(2));
        throw new Error('refused');
      }, TS),
    ).rejects.toThrow('refused');
    expect((await store.survey([ITEM_STORE])).location.exists).toBe(false);
  });

  it('sees its own appends and refuses a second append to one store (one batch per store)', async () => {
    const store = open(kind);
    await write(store, puts(2));
    expect(
      await store.write(async (tx) => {
        const items = await tx.load(ITEM_STORE);
        tx.append(ITEM_STORE, puts(1, 3));
        return items.size;
      }, TS),
    ).toBe(3);
    await expect(
      store.write(async (tx) => {
        tx.append(ITEM_STORE, puts(1, 4));
        tx.append(ITEM_STORE, puts(1, 5));
      }, TS),
    ).rejects.toThrow(/second append in one transaction/);
    expect(await keysOf(store)).toEqual(['k1', 'k2', 'k3']);
  });

  it('a batch is one: every record of a write or none, and readKey answers at least the key', async () => {
    const store = open(kind);
    await store.write(async (tx) => tx.append(KEYED as typeof ITEM_STORE, puts(50)), TS);
    const one = await store.readKey(KEYED as typeof ITEM_STORE, 'k7');
    expect(one.get('k7')).toBe(7);
    expect((await store.read(KEYED as typeof ITEM_STORE)).size).toBe(50);
  });

  it('compacts to the live records after a snapshot, keeps the rest as history, and reads every record once', async () => {
    const store = open(kind);
    await write(store, puts(3));
    await write(store, [{ ev: 'item.deleted', data: { id: 'k2' } }]);
    const [report] = await store.compact([ITEM_STORE], TS);
    expect(report).toMatchObject({ before: { records: 4 }, after: { records: 3 } });
    expect(await keysOf(store)).toEqual(['k1', 'k3']);
    const seen: string[] = [];
    await store.readHistory(ITEM_STORE, (record) => seen.push(`${record.ev} ${(record.data as { id: string }).id}`));
    expect(seen).toEqual(['item.put k1', 'item.put k2', 'item.put k3', 'item.deleted k2']);
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked).toMatchObject({ problems: [], history: { files: 1, records: 4, problems: [] } });
  });

  it('keeps each record once: nothing dead is no compaction, and an archive leaves out restatements history holds', async () => {
    const store = open(kind);
    await write(store, puts(3));
    for (let i = 0; i < 3; i++) expect(await store.compact([ITEM_STORE], TS)).toMatchObject([{ before: { records: 3 }, after: { records: 3 } }]);
    const history = async () =>
      (await store.readConsistent(async (view) => pieces(view.history(ITEM_STORE.file)))).map((piece) =>
        piece.lines.map((l) => JSON.parse(Buffer.from(l).toString()).seq),
      );
    expect(await history()).toEqual([]);
    await write(store, [{ ev: 'item.deleted', data: { id: 'k2' } }]);
    await store.compact([ITEM_STORE], TS); // snapshot 5, restatements 6 and 7
    await write(store, [{ ev: 'item.put', data: { id: 'k1', value: 10 } }]);
    await store.compact([ITEM_STORE], TS);
    expect(await history()).toEqual([
      [1, 2, 3, 4],
      [5, 8],
    ]);
    const seen: number[] = [];
    await store.readHistory(ITEM_STORE, (record) => seen.push(record.seq));
    expect(seen).toEqual([1, 2, 3, 4, 8]);
    const [checked] = await store.check([ITEM_STORE], { repair: false, ts: TS });
    expect(checked).toMatchObject({ problems: [], history: { files: 2, records: 6, problems: [] } });
  });

  it('enumerates its lines and history in one consistent view, and restores them byte for byte into an empty store', async () => {
    const from = open(kind);
    await write(from, puts(3));
    await write(from, [{ ev: 'item.deleted', data: { id: 'k1' } }]);
    await from.compact([ITEM_STORE], TS);
    await write(from, puts(1, 9));
    const { lines, history } = await from.readConsistent(async (view) => ({
      lines: await collect(view.lines(ITEM_STORE.file)),
      history: await pieces(view.history(ITEM_STORE.file)),
    }));
    expect(lines).toHaveLength(4);
    expect(history).toHaveLength(1);
    expect(history[0]!.name).toBe('items.000000000004.jsonl');
    for (const toKind of ENGINES) {
      const to = open(toKind);
      await to.restore(ITEM_STORE.file, lines, history);
      expect(await keysOf(to)).toEqual(['k2', 'k3', 'k9']);
      const [checked] = await to.check([ITEM_STORE], { repair: false, ts: TS });
      expect(checked).toMatchObject({ problems: [], history: { files: 1, problems: [] } });
      const again = await to.readConsistent(async (view) => pieces(view.history(ITEM_STORE.file)));
      expect(again.map((p) => [p.name, p.lines.map((l) => Buffer.from(l).toString())])).toEqual(
        history.map((p) => [p.name, p.lines.map((l) => Buffer.from(l).toString())]),
      );
      await expect(to.restore(ITEM_STORE.file, lines)).rejects.toMatchObject({ kind: 'conflict' });
    }
  });

  it('keeps key items exclusive (of two creators one wins) and lists them', async () => {
    const store = open(kind);
    expect(await store.keys.read('handoff.key')).toBeUndefined();
    expect(await store.keys.create('handoff.key', Buffer.alloc(32, 7))).toBe(true);
    expect(await store.keys.create('handoff.key', Buffer.alloc(32, 8))).toBe(false);
    expect(Buffer.from((await store.keys.read('handoff.key'))!)).toEqual(Buffer.alloc(32, 7));
    expect(await store.keys.stat('handoff.key')).toMatchObject({ mode: kind === 'dir' ? 0o600 : null, bytes: 32 });
    expect(await store.keys.list()).toEqual(['handoff.key']);
  });

  it('init makes it ready (print changes nothing), and a second init has nothing to do', async () => {
    const store = open(kind);
    const printed = await store.init({ print: true });
    expect(printed.printed).toBe(true);
    expect(printed.created.length).toBeGreaterThan(0);
    expect((await store.survey([ITEM_STORE])).location.exists).toBe(false);
    expect((await store.init({ print: false })).created).toEqual(printed.created);
    expect((await store.init({ print: false })).created).toEqual([]);
    await write(store, puts(1));
    expect(await keysOf(store)).toEqual(['k1']);
  });
});
