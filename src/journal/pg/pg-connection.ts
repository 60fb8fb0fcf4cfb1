// The PostgreSQL store's one connection and what runs on it: one operation at a time, transactions under the
// writers' lock, a lost connection failing what runs on it and replaced before the next operation (SPEC §11).
import { holdLockForTest } from '../../shared/crash-point';
import { noteCommit } from '../../shared/commit-log';
import { CruxError } from '../../shared/errors';
import { connectionLost, storeError, type Sql } from './client';
import type { ChainHead } from '../codec/record';
import { lockCall, readCatalog, refuseNewer, type Catalog } from './schema';
import { markWriter } from './pg-trust';
import { openServer, readOnlyRefusal, standbyNote } from './pg-server';
import { PgLink } from './pg-link';
import type { StoreUrl } from './url';

/** SQLSTATE: a write in a read-only transaction (a standby, or default_transaction_read_only). */
const READ_ONLY = '25006';

export class PgConnection {
  readonly location: string;
  /** The connection and its operation, shared with every other handle on this store (PgStore.forCaller). */
  protected readonly link: PgLink;

  constructor(
    readonly url: StoreUrl,
    protected readonly lockTimeoutMs: number,
    private readonly tell: (message: string) => void = () => {},
    link?: PgLink,
  ) {
    this.link = link ?? new PgLink();
    this.location = url.schema === 'crux' ? url.label : `${url.label}${url.label.includes('?') ? '&' : '?'}schema=${url.schema}`;
  }

  /**
   * The connection every operation opened (`connect`, before it runs): a connection lost meanwhile is not
   * replaced here (client.ts), so that what runs on it fails as a whole.
   */
  get sql(): Sql {
    if (this.link.client === undefined) throw Object.assign(new Error('the connection was lost'), { code: 'CONNECTION_CLOSED' });
    return this.link.client.sql;
  }

  /**
   * Connects before an operation when there is no live connection: to the first of the URL's servers that answers
   * as target_session_attrs asks (pg-server.ts). A connection lost between operations (a long-lived `crux mcp`, a
   * server restarted, a primary gone and a standby promoted) is replaced by a new one, to whichever server answers
   * now; when that is another primary than the one this process saw its journals on, the journals' heads are
   * verified against it (pg-seen-heads.ts). Nothing else outlives an operation (`forget`).
   */
  private async connect(): Promise<void> {
    if (this.link.client !== undefined && !this.link.client.lost) return;
    this.dropClient();
    const { client, facts } = await openServer(this.url, { lockTimeoutMs: this.lockTimeoutMs, onLost: (error) => this.link.failRunning?.(error) });
    this.link.client = client;
    this.link.facts = facts;
    this.link.lagTold = false;
    // Operations run one at a time (`queue`).
    for (const warning of await this.link.seen.arrived(client.sql, this.url.schema, this.location, facts)) this.tell(warning);
  }

  /** A chain head read whole or written (acknowledged) on the server answering now. */
  protected noteHead(file: string, head: ChainHead): void {
    this.link.seen.saw(file, head);
  }

  private dropClient(): void {
    const client = this.link.client;
    this.link.client = undefined;
    void client?.end(0).catch(() => {});
  }

  /** Whether the connection is open and not lost (a failed transaction is rolled back only on a live one). */
  protected get live(): boolean {
    return this.link.client !== undefined && !this.link.client.lost;
  }

  /** A quoted `schema.table` (bound: handed on as a function). */
  readonly ident = (table: string): string => `"${this.url.schema}".${table}`;

  /**
   * Ends the connection (at the end of every command), once the operations still running have finished: a server
   * whose input ended (`crux mcp`) may still be answering a call.
   */
  async close(): Promise<void> {
    while (this.link.inflight.size > 0) await Promise.allSettled([...this.link.inflight]);
    const client = this.link.client;
    this.link.client = undefined;
    if (client !== undefined) await client.end(1).catch(() => {});
  }

  /** What an operation starts from: nothing kept from the one before (another process may have written since). */
  protected forget(): void {
    this.link.catalog = undefined;
    this.link.schemaMoved = false;
  }

  /**
   * The store has one connection, so its operations run one at a time: `crux mcp` runs tool calls concurrently,
   * and two calls' statements interleaved on one connection would run inside each other's transaction (a put
   * answered "stored" inside a transaction that another call's error then rolled back). So `fn` waits its turn in
   * the link's queue — unless this handle's own operation is running: its caller works one operation at a time
   * (a command, one MCP call, one dashboard request), so a call it makes meanwhile is made from inside that
   * operation (a key read or created while a write decides, a read within it) and joins it, where waiting would
   * wait for itself. Each operation reads the catalog afresh: a long-lived process (`crux mcp`) must see the
   * tables another process created since its last call.
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const link = this.link;
    if (link.owner === this) return fn();
    const before = link.queue;
    let release!: () => void;
    link.queue = new Promise<void>((resolve) => (release = resolve));
    return before
      .then(async () => {
        this.forget();
        link.owner = this;
        await this.connect();
        return await this.untilLost(fn);
      })
      .finally(() => {
        link.owner = undefined;
        release();
      });
  }

  /** The transaction `locked` or `consistent` is running, if any. */
  protected get active(): Sql | undefined {
    return this.link.active;
  }

  /** What the running transaction wrote, for noteCommit once COMMIT is acknowledged. */
  get committing(): string[] {
    return this.link.committing;
  }

  /** The chain heads the running transaction leaves, taken as seen once COMMIT is acknowledged. */
  get committingHeads(): { file: string; head: ChainHead }[] {
    return this.link.committingHeads;
  }

  /**
   * Runs `fn`, failing it as soon as the connection is lost. The client does not always settle the statement it
   * was waiting on when its socket goes (a server that went silent, then was cut off): a promise left pending
   * with nothing else to wait for would let the process exit 0 with nothing committed, an acknowledgement of a
   * write that never happened. So the store settles the operation itself, and forgets the transaction it ran.
   */
  private untilLost<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.link.failRunning = (error) => {
        this.link.active = undefined;
        this.link.catalog = undefined;
        this.link.committing.length = 0;
        this.link.committingHeads.length = 0;
        this.dropClient();
        reject(error);
      };
      fn().then(resolve, reject);
    }).finally(() => {
      this.link.failRunning = undefined;
    });
  }

  /** Runs `fn`, turning failures of the server or the network into their CruxError (exit 75). */
  async guard<T>(fn: () => Promise<T>): Promise<T> {
    const running = this.exclusive(fn);
    this.link.inflight.add(running);
    try {
      const result = await running;
      // A read served by a standby (a write there fails) says how far behind the primary it may be, once a connection.
      if (this.link.facts?.standby === true && !this.link.lagTold && this.link.owner !== this) {
        this.link.lagTold = true;
        this.tell(standbyNote(this.location, this.link.facts));
      }
      return result;
    } catch (error) {
      // A connection that failed is not used again: the next operation opens a new one.
      if (connectionLost(error) && this.link.active === undefined) this.dropClient();
      // A read-only server (a standby named alone) refused a write: said naming the server (nothing was written).
      if ((error as { code?: unknown }).code === READ_ONLY && this.link.facts !== undefined) throw readOnlyRefusal(this.location, this.link.facts);
      throw storeError(error, this.url, this.lockTimeoutMs) ?? error;
    } finally {
      this.link.inflight.delete(running);
    }
  }

  /**
   * What reads go through: the running write transaction when there is one (the connection is busy with it, and
   * it sees its own rows), else the connection.
   */
  get reader(): Sql {
    return this.link.active ?? this.sql;
  }

  /** The catalog for reads, read once per command; a schema a newer crux wrote is refused. */
  async readCatalog(): Promise<Catalog> {
    if (this.link.catalog === undefined) {
      this.link.catalog = await readCatalog(this.reader, this.url.schema);
      refuseNewer(this.link.catalog, this.location);
    }
    return this.link.catalog;
  }

  /**
   * Runs `fn` in one transaction holding the store's writers' lock (waiting at most CRUX_LOCK_TIMEOUT), with the
   * catalog as of the lock. A nested call (a key created while `write` decides) joins the running transaction.
   */
  async locked<T>(fn: (sql: Sql, catalog: Catalog) => Promise<T>): Promise<T> {
    if (this.link.active !== undefined && this.link.owner === this) {
      const active = this.link.active;
      try {
        return await fn(active, await readCatalog(active, this.url.schema));
      } finally {
        this.link.catalog = undefined;
        // What it made (the schema itself, when a key is created in a store's first write) is not in the catalog
        // the running transaction read at the lock: that transaction reads it again before it makes anything.
        this.link.schemaMoved = true;
      }
    }
    return this.transaction(async (sql) => {
      await sql.unsafe(`select ${lockCall('pg_advisory_xact_lock', this.url.schema)}`);
      const catalog = await readCatalog(sql, this.url.schema);
      refuseNewer(catalog, this.location);
      // Derived rows written in this transaction keep their trust (pg-trust.ts).
      await markWriter(sql);
      await holdLockForTest();
      this.link.active = sql;
      this.link.catalog = catalog;
      try {
        return await fn(sql, catalog);
      } finally {
        this.link.active = undefined;
        this.link.catalog = undefined;
      }
    });
  }

  /**
   * Runs `fn` in one transaction on the store's one connection, which is never reconnected (client.ts): every
   * statement `fn` issues is in the transaction, or fails. `begin`: how it starts.
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>, begin = 'begin'): Promise<T> {
    return this.guard(async () => {
      const sql = this.sql;
      await sql.unsafe(begin);
      try {
        const result = await fn(sql);
        // PostgreSQL answers COMMIT of a transaction that an earlier statement aborted with the tag ROLLBACK, not
        // an error: only the tag COMMIT acknowledges the write (anything else exits 75, nothing was changed).
        const outcome = await sql`commit`;
        if (outcome.command !== 'COMMIT') {
          throw new CruxError('store_unavailable', `the PostgreSQL store ${this.location} rolled the transaction back (${outcome.command})`);
        }
        if (this.link.committing.length > 0) noteCommit(this.link.committing.splice(0).join(', '));
        for (const { file, head } of this.link.committingHeads.splice(0)) this.noteHead(file, head);
        return result;
      } catch (error) {
        this.link.committing.length = 0;
        this.link.committingHeads.length = 0;
        // A lost connection's transaction was rolled back by the server; a live one is rolled back here.
        if (this.live) await sql`rollback`.catch(() => {});
        throw error;
      }
    });
  }

  /**
   * Runs `use` in one read-only repeatable-read transaction (`journal copy`'s source): every read in it sees the
   * store as of one moment while writers go on.
   */
  async consistent<T>(use: (sql: Sql, catalog: Catalog) => Promise<T>): Promise<T> {
    return this.transaction(async (sql) => {
      this.link.active = sql;
      try {
        const catalog = await readCatalog(sql, this.url.schema);
        refuseNewer(catalog, this.location);
        return await use(sql, catalog);
      } finally {
        this.link.active = undefined;
      }
    }, 'begin isolation level repeatable read read only');
  }
}
