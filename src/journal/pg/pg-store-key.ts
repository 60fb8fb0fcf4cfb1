// The `keys` table: key items on PostgreSQL (store-boundary.ts, KeyStore), rows guarded by the database's grants; and
// which key a PostgreSQL store is encrypted with (SPEC §13): the row `store-key.json` of the `keys` table, holding
// `{"key_id":"k-…","cipher":"aes-256-gcm"}` as a data directory's keys/store-key.json does — never the key. It is
// read under the writers' lock at the start of every write (pg-store.ts), inserted in the same transaction as the
// first records of a store created with a key, and replaced in the same transaction as `journal encrypt`, `rekey`
// and `decrypt` rewrite every row (pg-lines.ts). Only ids and ciphertext go to the server: values are sealed in
// this process (codec/cipher.ts) before any statement carries them.
import { configureCipher, givenKey, STORE_KEY_ITEM } from '../codec/cipher';
import type { StoreKey } from '../../shared/store-key';
import type { Sql } from './client';
import type { KeyFacts, KeyStore } from '../core/store-boundary';
import { keyIgnored, needsRecords, parseStoreKeyMark, recordedMode, storeKeyMarkText, writeSealing } from '../core/store-key';
import type { PgHost } from './pg-host';
import { journalTable, migrate, type Catalog } from './schema';

/** The name of the row that records the store's key id (the data directory's file name, so both read alike). */
export const STORE_KEY_ROW = STORE_KEY_ITEM;

/** The key id the row's bytes name (undefined: no row, a plain store); a row that names none is exit 5. */
export const parseStoreKeyRow = (bytes: Uint8Array | undefined, where: string): string | undefined =>
  parseStoreKeyMark(bytes, where, 'restore the keys table from a backup of the database');

/** Where the store's key-id row is (PgHost), read and written in the caller's transaction; `files`: its journals. */
type KeyRows = { store: PgHost; sql: Sql; catalog: Catalog; files?: readonly string[] };

/** The key id the store records. */
async function readStoreKeyId({ store, sql, catalog }: KeyRows): Promise<string | undefined> {
  if (!catalog.tables.has('keys')) return undefined;
  const [row] = await sql.unsafe<{ bytes: Buffer }[]>(`select bytes from ${store.ident('keys')} where name = $1`, [STORE_KEY_ROW]);
  return parseStoreKeyRow(row === undefined ? undefined : new Uint8Array(row.bytes), `${store.location} keys/${STORE_KEY_ROW}`);
}

/** Records (or with undefined, removes) the store's key id (the schema made if new). */
export async function writeStoreKeyId({ store, sql, catalog }: KeyRows, keyId: string | undefined): Promise<void> {
  if (keyId === undefined) {
    if (catalog.tables.has('keys')) await sql.unsafe(`delete from ${store.ident('keys')} where name = $1`, [STORE_KEY_ROW]);
    return;
  }
  await migrate(sql, store.url.schema, catalog, 'key');
  const bytes = Buffer.from(storeKeyMarkText(keyId));
  await sql.unsafe(`insert into ${store.ident('keys')} (name, bytes) values ($1, $2) on conflict (name) do update set bytes = excluded.bytes`, [
    STORE_KEY_ROW,
    bytes,
  ]);
}

/** Whether any journal of the store holds a row: a store that holds none may still become an encrypted one. */
async function hasRecords({ store, sql, catalog, files = [] }: KeyRows): Promise<boolean> {
  for (const file of files) {
    const table = journalTable(file);
    if (!catalog.tables.has(table)) continue;
    const rows = await sql.unsafe(`select 1 from ${store.ident(table)} limit 1`);
    if (rows.length > 0) return true;
  }
  return false;
}

let warned = false;

/**
 * Decides, under the lock at the start of a write, how it seals (codec/cipher.ts asks synchronously, so the
 * answer is read here first): core/store-key.ts writeSealing; `record`, the key id its commit records.
 */
export async function settleSealing(rows: KeyRows): Promise<ReturnType<typeof writeSealing>> {
  const key = givenKey();
  const recorded = await readStoreKeyId(rows);
  const sealing = writeSealing(recorded, key, needsRecords(recorded, key) && (await hasRecords(rows)));
  if (sealing.ignored) tellIgnored(key!, rows.store);
  const mode = sealing.mode;
  configureCipher({ key, mode: () => mode });
  return sealing;
}

/**
 * Tells the cipher, for a read that derives what it looks for from the key (a case retrieve's words as keyed
 * hashes), what the store is: the recorded key id with the key given (sealing) or without it (locked), or plain.
 * Read afresh on every such read, so a long-lived process follows an encrypt, rekey or decrypt made elsewhere.
 */
export async function settleReading(rows: KeyRows): Promise<void> {
  const key = givenKey();
  const mode = recordedMode(await readStoreKeyId(rows), key);
  configureCipher({ key, mode: () => mode });
}

/** The one warning of a process for a key given to a plain store. */
function tellIgnored(key: StoreKey, store: PgHost): void {
  if (!warned) store.warn(keyIgnored(key));
  warned = true;
}

/**
 * A read given a key (a write settles it under its lock): a plain store that holds records ignores it, with the
 * one warning of the process (SPEC §13); an encrypted or new store says nothing here.
 */
export async function warnIgnoredKey(rows: KeyRows): Promise<void> {
  const key = givenKey();
  if (key === undefined || warned) return;
  if ((await readStoreKeyId(rows)) !== undefined || !(await hasRecords(rows))) return;
  tellIgnored(key, rows.store);
}

/** Key items as rows of the `keys` table: created with an insert that only one of racing creators wins. */
export class PgKeyStore implements KeyStore {
  constructor(private readonly store: PgHost) {}

  describe(name: string): string {
    return `${this.store.location} keys/${name}`;
  }

  async read(name: string): Promise<Uint8Array | undefined> {
    return this.store.guard(async () => {
      const catalog = await this.store.readCatalog();
      if (!catalog.tables.has('keys')) return undefined;
      const [row] = await this.store.reader.unsafe<{ bytes: Buffer }[]>(`select bytes from ${this.store.ident('keys')} where name = $1`, [name]);
      return row === undefined ? undefined : new Uint8Array(row.bytes);
    });
  }

  async create(name: string, bytes: Uint8Array | string): Promise<boolean> {
    const data = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes);
    return this.store.locked(async (sql, catalog) => {
      await migrate(sql, this.store.url.schema, catalog, 'key');
      const rows = await sql.unsafe(`insert into ${this.store.ident('keys')} (name, bytes) values ($1, $2) on conflict (name) do nothing returning name`, [
        name,
        data,
      ]);
      return rows.length === 1;
    });
  }

  async stat(name: string): Promise<KeyFacts | undefined> {
    const bytes = await this.read(name);
    return bytes === undefined ? undefined : { path: this.describe(name), mode: null, bytes: bytes.length };
  }

  peek(name: string): Promise<Uint8Array | undefined> {
    return this.read(name);
  }

  async list(): Promise<string[]> {
    return this.store.guard(async () => {
      const catalog = await this.store.readCatalog();
      if (!catalog.tables.has('keys')) return [];
      const rows = await this.store.reader.unsafe<{ name: string }[]>(`select name from ${this.store.ident('keys')} order by name`);
      return rows.map((r) => r.name);
    });
  }
}
