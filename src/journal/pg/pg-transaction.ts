// One write transaction on PostgreSQL (store-boundary.ts, Transaction): loads read under the advisory lock, appends
// encoded at once against the loaded head, and every batch inserted (with its index rows) when `decide` returns:
// each row with the columns the database indexes (seq, hash, the entity's key, whether the record resets it).
import { sealDrafts } from '../codec/cipher';
import { decodeOwn, encodeRecords, type ChainHead, type EventDraft } from '../codec/record';
import type { IndexQuery, StoreSpec } from '../codec/store-spec';
import type { Reporter, Transaction } from '../core/store-boundary';
import { crashPoint } from '../../shared/crash-point';
import { entityOf, refuseLateKeyLoad, refuseSecondAppend, refuseWholeAfterKey } from '../core/policy';
import type { Sql } from './client';
import type { PgWriter } from './pg-host';
import { keepsIndexRows, keysOf } from './pg-index';
import { trackGrowth } from './pg-autocompact';
import { rowPosition } from './pg-fold';
import { arrayLiteral, journalTable, type Catalog } from './schema';
import { writeStoreKeyId } from './pg-store-key';
import type { StoreKey } from '../../shared/store-key';

/** One write: loads read under the lock; appends are encoded at once and inserted when `decide` has returned. */
export class PgTransaction implements Transaction {
  private readonly loaded = new Map<StoreSpec<any>, { state: unknown; full: boolean; head: ChainHead; line: number }>();
  /** Batches in the order of their append; `lines` is undefined for a store appended to without a load (encoded at commit). */
  private readonly pending: { spec: StoreSpec<any>; drafts: readonly EventDraft[]; lines?: string[]; afterLine?: number; afterHead?: ChainHead }[] = [];
  /** The journals this write took past the automatic-compaction rule (pg-autocompact.ts): compacted once it commits. */
  readonly due: StoreSpec<any>[] = [];

  constructor(
    private readonly store: PgWriter,
    private readonly sql: Sql,
    private catalog: Catalog,
    readonly ts: string,
    /** A new store given a key: its key id is recorded with the first records (pg-store-key.ts). */
    private readonly recordKey?: StoreKey,
  ) {}

  async load<S>(spec: StoreSpec<S>): Promise<S> {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded.state as S;
    if (loaded !== undefined) refuseWholeAfterKey(spec);
    const folded = await this.store.foldWhole(this.sql, this.catalog, spec);
    this.loaded.set(spec, { state: folded.state, full: true, head: folded.scan.head, line: folded.line });
    this.applyBlind(spec);
    return folded.state;
  }

  loadKey<S>(spec: StoreSpec<S>, ...keys: string[]): Promise<S> {
    return this.loadSome(spec, () => this.store.foldKeys(this.sql, this.catalog, spec, keys));
  }

  loadIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.loadSome(spec, () => this.store.foldIndexed(this.sql, this.catalog, spec, query));
  }

  /** The candidates of a query over `query.terms`, from the term rows when they are trusted, else the whole state. */
  loadTerms<S>(spec: StoreSpec<S>, query: { readonly terms: readonly string[] }): Promise<S> {
    return this.loadSome(spec, () => this.store.foldTerms(this.sql, this.catalog, spec, query));
  }

  /**
   * Some entities of a store (`fold` reads their rows; undefined: it cannot, and the whole store is loaded),
   * with the journal's head to append after.
   */
  private async loadSome<S>(spec: StoreSpec<S>, fold: () => Promise<{ state: S } | undefined>): Promise<S> {
    const loaded = this.loaded.get(spec);
    if (loaded?.full) return loaded.state as S;
    if (loaded !== undefined) refuseLateKeyLoad(spec);
    if (spec.keyOf === undefined || this.pending.some((p) => p.spec === spec)) return this.load(spec);
    await this.trustDerived(spec);
    const [folded, { head, line }] = await Promise.all([fold(), this.store.headOf(this.sql, this.catalog, spec.file)]);
    if (folded === undefined) return this.load(spec);
    this.loaded.set(spec, { state: folded.state, full: false, head, line });
    return folded.state;
  }

  /**
   * Derived rows not trusted (an upgrade changed their binding, a hand edit): rebuilt before the read, entity by entity
   * (pg-rebuild.ts), so that this write reads its entities by key rather than fold the whole journal in memory, and
   * its commit maintains the rows by key.
   */
  private async trustDerived<S>(spec: StoreSpec<S>): Promise<void> {
    if ((!keepsIndexRows(spec) && spec.terms === undefined) || !this.catalog.tables.has(journalTable(spec.file))) return;
    const trusted = await this.store.derivedTrusted(this.sql, this.catalog, spec);
    if ((!keepsIndexRows(spec) || trusted.index) && (spec.terms === undefined || trusted.terms)) return;
    this.catalog = await this.store.prepare(this.sql, this.catalog, spec.file);
    // No entity changed yet: the parts not trusted are rebuilt, the others only follow the head (which has not moved).
    await this.store.refreshIndex(this.sql, this.catalog, spec, [], { trusted });
  }

  append<S>(spec: StoreSpec<S>, drafts: readonly EventDraft[]): void {
    if (drafts.length === 0) return;
    refuseSecondAppend(
      spec,
      this.pending.some((p) => p.spec === spec),
    );
    const batch: (typeof this.pending)[number] = { spec, drafts: sealDrafts(spec as StoreSpec<unknown>, drafts) };
    this.pending.push(batch);
    if (this.loaded.has(spec)) this.encode(batch);
  }

  /** Encodes a batch after the loaded head and applies it to the loaded state. */
  private encode(batch: (typeof this.pending)[number]): void {
    const loaded = this.loaded.get(batch.spec)!;
    const { text, head } = encodeRecords(loaded.head, batch.drafts, this.ts, { batch: true });
    const lines = text.split('\n').slice(0, -1);
    lines.forEach((body, i) => {
      batch.spec.evolve(loaded.state, decodeOwn(body), rowPosition(loaded.line + i + 1, body));
    });
    batch.lines = lines;
    batch.afterLine = loaded.line;
    batch.afterHead = loaded.head;
    loaded.head = head;
    loaded.line += lines.length;
  }

  /** A store appended to before it was loaded: its batch now follows the head just read. */
  private applyBlind(spec: StoreSpec<any>): void {
    const batch = this.pending.find((p) => p.spec === spec);
    if (batch !== undefined && batch.lines === undefined) this.encode(batch);
  }

  /** Inserts every pending batch, creating the schema and tables they need; the caller's transaction commits. */
  async commit(): Promise<void> {
    for (const batch of this.pending) {
      if (batch.lines === undefined) {
        const { head, line } = await this.store.headOf(this.sql, this.catalog, batch.spec.file);
        this.loaded.set(batch.spec, { state: batch.spec.initial(), full: false, head, line });
        this.encode(batch);
      }
      this.catalog = await this.store.prepare(this.sql, this.catalog, batch.spec.file);
      // Verified before the rows go in: afterwards the binding names the head the journal had.
      const trusted = await this.store.derivedTrusted(this.sql, this.catalog, batch.spec);
      const records = batch.lines!.map(decodeOwn);
      const keys = keysOf(batch.spec, records);
      const loaded = this.loaded.get(batch.spec)!;
      const insert = () => this.store.insertLines(this.sql, batch.spec, batch.lines!, batch.afterLine!);
      const before = { line: batch.afterLine!, head: batch.afterHead! };
      const whole = loaded.full ? loaded.state : undefined;
      if (await trackGrowth(this.sql, this.store.ident, this.catalog, batch.spec, { lines: batch.lines!, keys, before, whole }, insert)) {
        this.due.push(batch.spec);
      }
      await this.store.refreshIndex(this.sql, this.catalog, batch.spec, keys, { trusted, records });
    }
    // A store created with a key records its id in the same transaction as its first records.
    if (this.recordKey !== undefined && this.pending.length > 0)
      await writeStoreKeyId({ store: this.store, sql: this.sql, catalog: this.catalog }, this.recordKey.id);
    // `crux ui` listens: a notice sent in the transaction reaches it only once the transaction commits.
    for (const batch of this.pending) await this.sql`select pg_notify('crux_changed', ${`${this.store.url.schema}:${batch.spec.file}`})`;
    // Every row is in, none committed: a writer killed here leaves nothing (the server rolls back).
    if (this.pending.length > 0) crashPoint('pg-before-commit');
    for (const batch of this.pending) {
      this.store.committing.push(`${batch.lines!.length} record(s) to ${batch.spec.file}`);
      this.store.committingHeads.push({ file: batch.spec.file, head: this.loaded.get(batch.spec)!.head });
    }
  }
}

/** Rows inserted per statement. */
const INSERT_ROWS = 5000;

/**
 * Inserts encoded lines after `line`, INSERT_ROWS a statement: every statement stays short, so that a server
 * silent past the client's bound (client.ts) has stopped answering, whatever the size of the batch.
 */
export async function insertLines<S>(
  q: Sql,
  ident: (table: string) => string,
  reporter: Reporter,
  spec: StoreSpec<S>,
  lines: readonly string[],
  afterLine: number,
): Promise<void> {
  // A batch of many statements (an import) tells its progress, as a data directory's write does (one Reporter).
  const progress = lines.length > INSERT_ROWS ? reporter.progress?.bind(reporter) : undefined;
  for (let i = 0; i < lines.length; i += INSERT_ROWS) {
    progress?.('writing', i, lines.length);
    await insertSome(q, ident, spec, lines.slice(i, i + INSERT_ROWS), afterLine + i);
  }
  progress?.('writing', lines.length, lines.length);
}

async function insertSome<S>(q: Sql, ident: (table: string) => string, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void> {
  if (lines.length === 0) return;
  const n = lines.length;
  const lineNos: number[] = new Array(n);
  const seqs: number[] = new Array(n);
  const hashes: string[] = new Array(n);
  const keys: (string | null)[] = new Array(n);
  const resets: boolean[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const record = decodeOwn(lines[i]!);
    lineNos[i] = afterLine + i + 1;
    seqs[i] = record.seq;
    hashes[i] = record.h;
    const key = entityOf(spec as StoreSpec<unknown>, record);
    keys[i] = key ?? null;
    resets[i] = key !== undefined && spec.resets?.(record) === true;
  }
  await q.unsafe(
    `insert into ${ident(journalTable(spec.file))} (line, seq, h, body, key, resets)
     select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[])`,
    [arrayLiteral(lineNos), arrayLiteral(seqs), arrayLiteral(hashes), arrayLiteral(lines), arrayLiteral(keys), arrayLiteral(resets)],
  );
}
