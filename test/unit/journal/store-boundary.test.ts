// The store boundary as a data directory implements it: transactions, the key store, and the enumeration
// `journal copy` uses (raw lines out, restore in).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { tempDir } from '../../helpers/cli';
import { ITEM_STORE, puts } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';
const open = (root = join(tempDir(), 'data')): DataDir => new DataDir(root, { warn: () => {} }, 5_000);

describe('a data directory behind the store boundary', () => {
  it('writes nothing when decide throws after its append, and nothing for a refused first write', async () => {
    const store: JournalStore = open();
    await expect(
      store.write(async (tx) => {
        await tx.load(ITEM_STORE);
        tx.append(ITEM_STORE, puts(3));
        throw new Error('refused');
      }, TS),
    ).rejects.toThrow('refused');
    expect(fs.existsSync(store.location)).toBe(false);
    await store.write(async (tx) => tx.append(ITEM_STORE, puts(2)), TS);
    await expect(
      store.write(async (tx) => {
        tx.append(ITEM_STORE, puts(1, 5));
        throw new Error('refused');
      }, TS),
    ).rejects.toThrow('refused');
    expect([...(await store.read(ITEM_STORE)).keys()]).toEqual(['k1', 'k2']);
  });

  it('sees its own appends within the transaction and refuses a second append to one store', async () => {
    const store = open();
    const seen = await store.write(async (tx) => {
      const items = await tx.load(ITEM_STORE);
      tx.append(ITEM_STORE, puts(2));
      return items.size;
    }, TS);
    expect(seen).toBe(2);
    await expect(
      store.write(async (tx) => {
        tx.append(ITEM_STORE, puts(1, 3));
        tx.append(ITEM_STORE, puts(1, 4));
      }, TS),
    ).rejects.toThrow(/second append/);
    expect((await store.read(ITEM_STORE)).size).toBe(2);
  });

  it('enumerates raw lines and restores them byte for byte into an empty store', async () => {
    const from = open();
    await from.write(async (tx) => tx.append(ITEM_STORE, puts(5)), TS);
    await from.write(async (tx) => tx.append(ITEM_STORE, [{ ev: 'item.deleted', data: { id: 'k2' } }]), TS);
    fs.appendFileSync(join(from.root, ITEM_STORE.file), '{"torn');
    const lines: Uint8Array[] = [];
    for await (const line of from.rawLines(ITEM_STORE.file)) lines.push(line);
    expect(lines).toHaveLength(7);
    expect(Buffer.from(lines[6]!).toString()).toBe('{"torn');
    const to = open();
    await to.restore(ITEM_STORE.file, lines.slice(0, 6));
    const original = fs.readFileSync(join(from.root, ITEM_STORE.file));
    expect(fs.readFileSync(join(to.root, ITEM_STORE.file))).toEqual(original.subarray(0, original.lastIndexOf(10) + 1));
    expect([...(await to.read(ITEM_STORE)).keys()]).toEqual(['k1', 'k3', 'k4', 'k5']);
    await expect(to.restore(ITEM_STORE.file, lines)).rejects.toMatchObject({ kind: 'conflict' });
    const [report] = await to.check([ITEM_STORE], { repair: false, ts: TS });
    expect(report!.problems).toEqual([]);
  });

  it('keeps key items private and exclusive, and lists them', async () => {
    const store = open();
    expect(await store.keys.read('handoff.key')).toBeUndefined();
    expect(await store.keys.list()).toEqual([]);
    expect(await store.keys.create('handoff.key', Buffer.alloc(32, 7))).toBe(true);
    expect(await store.keys.create('handoff.key', Buffer.alloc(32, 8))).toBe(false);
    expect(Buffer.from((await store.keys.read('handoff.key'))!)).toEqual(Buffer.alloc(32, 7));
    expect(await store.keys.stat('handoff.key')).toMatchObject({ mode: 0o600, bytes: 32 });
    expect(await store.keys.list()).toEqual(['handoff.key']);
    fs.chmodSync(store.keys.describe('handoff.key'), 0o644);
    await expect(store.keys.read('handoff.key')).rejects.toMatchObject({ kind: 'invalid_input' });
    expect(Buffer.from((await store.keys.peek('handoff.key'))!)).toEqual(Buffer.alloc(32, 7));
  });
});
