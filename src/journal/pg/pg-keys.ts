// Key items on PostgreSQL (store-boundary.ts, KeyStore): rows of the `keys` table, guarded by the database's grants.
import type { KeyFacts, KeyStore } from '../core/store-boundary';
import type { PgHost } from './pg-host';
import { migrate } from './schema';

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
