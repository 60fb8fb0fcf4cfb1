// Encrypted at rest, one suite over both engines (SPEC §13, §11): a store written with a key holds its sealed fields
// as ciphertext on both, the records' plain parts and the opened values agree, the store records the key id, and
// the one record-rewrite path re-seals every record under another key. On PostgreSQL the key id is a `keys` row
// read under the lock at each write (so a write with another key is refused, 6) and recorded in the rewrite's
// own transaction.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configureCipher, isSealed, openSealed, resealData, sealedKeyId } from '../../../src/journal/codec/cipher';
import type { EventDraft } from '../../../src/journal/codec/record';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreKeyRow, STORE_KEY_ROW } from '../../../src/journal/pg/pg-store-key';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { CruxError } from '../../../src/shared/errors';
import { newStoreKey, parseStoreKey, type StoreKey } from '../../../src/shared/store-key';
import { ENGINES, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl } from '../../helpers/pg';
import { ITEM_STORE } from './fixtures';

const TS = '2026-12-07T16:00:00.000Z';
const SEALED_ITEMS: StoreSpec<Map<string, unknown>> = {
  ...ITEM_STORE,
  sealed: { fields: { 'item.put': { value: 'value' } }, entity: (data) => data.id },
};
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});
afterEach(() => configureCipher({ key: undefined, mode: () => ({ kind: 'plain' }) }));

function open(kind: StoreKind): JournalStore {
  if (kind === 'dir') return new DataDir(join(tempDir(), 'data'), { warn: () => {} }, 5_000);
  const store = new PgStore(parseStoreUrl(freshStoreUrl('seal')), {
    reporter: { warn: () => {} },
    lockTimeoutMs: 5_000,
    cruxVersion: 'test',
    specs: [SEALED_ITEMS],
  });
  opened.push(store);
  return store;
}

const key = (): StoreKey => parseStoreKey(newStoreKey().text, 'test');
/** What the command's context does on a data directory (cli/store-cipher.ts): this key seals; PostgreSQL decides under its lock. */
const useKey = (k: StoreKey | undefined) => configureCipher({ key: k, mode: () => (k === undefined ? { kind: 'plain' } : { kind: 'sealing', key: k }) });
const drafts = (values: string[]): EventDraft[] => values.map((value, i) => ({ ev: 'item.put', data: { id: `k${i + 1}`, value } }));
const write = (store: JournalStore, d: EventDraft[]) =>
  store.write(async (tx) => {
    await tx.load(SEALED_ITEMS);
    tx.append(SEALED_ITEMS, d);
  }, TS);
async function records(store: JournalStore): Promise<any[]> {
  return store.readConsistent(async (view) => {
    const out: any[] = [];
    for await (const line of view.lines(SEALED_ITEMS.file)) out.push(JSON.parse(Buffer.from(line).toString('utf8')));
    return out;
  });
}
const place = (id: string) => ({ file: SEALED_ITEMS.file, entity: id, field: 'value' });
/** The records with each sealed value as the key id it needs, and its chain hashes left out (they cover the ciphertext). */
const plainParts = (rs: any[]) =>
  rs.map((r) => ({ seq: r.seq, ev: r.ev, id: r.data.id, value: isSealed(r.data.value) ? `[${sealedKeyId(r.data.value)}]` : r.data.value }));
const recordedKeyId = async (store: JournalStore) => parseStoreKeyRow(await store.keys.read(STORE_KEY_ROW), 'test');

describe.each(ENGINES)('a store written with a key, on a %s store', (kind) => {
  it('holds each sealed field as ciphertext at its place; the rewrite path re-seals every record under another key', async () => {
    const store = open(kind);
    const k1 = key();
    const k2 = key();
    useKey(k1);
    await write(store, drafts(['secret-one', 'secret-two']));
    const written = await records(store);
    expect(plainParts(written)).toEqual([
      { seq: 1, ev: 'item.put', id: 'k1', value: `[${k1.id}]` },
      { seq: 2, ev: 'item.put', id: 'k2', value: `[${k1.id}]` },
    ]);
    expect(JSON.stringify(written)).not.toContain('secret-');
    expect(written.map((r) => openSealed(r.data.value, place(r.data.id), k1))).toEqual(['secret-one', 'secret-two']);
    if (kind === 'pg') expect(await recordedKeyId(store)).toBe(k1.id);

    const result = await store.rewrite(
      [SEALED_ITEMS],
      TS,
      (record, spec) => {
        const data = resealData(spec, record.ev, record.data, k1, k2);
        return data === undefined ? undefined : { ...record, data };
      },
      { note: 'rekeyed', doing: 'journal rekey', storeKeyId: k2.id },
    );
    expect(result.journals[0]).toMatchObject({ records: 2, changed: 2 });
    const rekeyed = await records(store);
    expect(plainParts(rekeyed)).toEqual(plainParts(written).map((r) => ({ ...r, value: `[${k2.id}]` })));
    expect(rekeyed.map((r) => openSealed(r.data.value, place(r.data.id), k2))).toEqual(['secret-one', 'secret-two']);
    expect((await store.check([SEALED_ITEMS], { repair: false, ts: TS }))[0]).toMatchObject({ records: 2, problems: [] });
    if (kind === 'pg') expect(await recordedKeyId(store)).toBe(k2.id);
  });
});

describe.each(ENGINES.filter((k) => k === 'pg'))('the key id of a %s store, read under the lock at each write', (kind) => {
  it('a write of sealed text with another key, or none, is refused (6) naming the key id; a rewrite with null removes the row', async () => {
    const store = open(kind);
    const k1 = key();
    useKey(k1);
    await write(store, drafts(['secret-one']));
    for (const given of [key(), undefined]) {
      useKey(given);
      const refused = await write(store, drafts(['secret-two'])).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(CruxError);
      expect((refused as CruxError).message).toContain(k1.id);
      expect((refused as CruxError).exitCode).toBe(6);
    }
    expect((await records(store)).length).toBe(1);
    useKey(k1);
    await store.rewrite(
      [SEALED_ITEMS],
      TS,
      (record, spec) => {
        const data = resealData(spec, record.ev, record.data, k1, undefined);
        return data === undefined ? undefined : { ...record, data };
      },
      { note: 'decrypted', doing: 'journal decrypt', storeKeyId: null },
    );
    expect(await recordedKeyId(store)).toBeUndefined();
    expect((await records(store)).map((r) => r.data.value)).toEqual(['secret-one']);
    // A plain store with records: a key given is ignored, text stays plain.
    useKey(k1);
    await write(store, drafts(['x', 'plain-two']));
    expect((await records(store)).map((r) => r.data.value)).toEqual(['secret-one', 'x', 'plain-two']);
  });
});
