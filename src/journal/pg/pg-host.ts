// What the PostgreSQL store's whole-journal operations (check, compact, survey, restore, init) need of the store:
// an interface of its own, so that they and pg-store.ts do not import each other.
import type { ChainHead, JournalRecord } from '../codec/record';
import type { IndexQuery, StoreSpec } from '../codec/store-spec';
import type { JournalStore, ProgressSink } from '../core/store-boundary';
import type { Sql } from './client';
import type { RowScan } from './pg-fold';
import { journalTable, type Catalog } from './schema';
import type { StoreUrl } from './url';

/** A query over a journal's terms (JournalStore.readTerms). */
export type TermQuery = Parameters<JournalStore['readTerms']>[1];

/** Whether a journal's index rows and term rows can be trusted (pg-trust.ts). */
export interface DerivedTrust {
  readonly index: boolean;
  readonly terms: boolean;
}

export interface PgHost {
  readonly location: string;
  readonly url: StoreUrl;
  /** A quoted `schema.table`. */
  readonly ident: (table: string) => string;
  /** What reads go through: the running write transaction, or the connection. */
  readonly reader: Sql;
  guard<T>(fn: () => Promise<T>): Promise<T>;
  locked<T>(fn: (sql: Sql, catalog: Catalog) => Promise<T>): Promise<T>;
  transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  readCatalog(): Promise<Catalog>;
  fold<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, opts?: { quiet?: boolean; progress?: ProgressSink }): Promise<{ state: S; scan: RowScan }>;
  headOf(q: Sql, catalog: Catalog, file: string): Promise<{ head: ChainHead; line: number }>;
  prepare(sql: Sql, catalog: Catalog, file: string): Promise<Catalog>;
  insertLines<S>(q: Sql, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void>;
  derivedTrusted<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<DerivedTrust>;
  refreshIndex<S>(
    sql: Sql,
    catalog: Catalog,
    spec: StoreSpec<S>,
    keys: readonly string[] | 'all',
    opts?: { trusted?: DerivedTrust; records?: readonly JournalRecord[] },
  ): Promise<void>;
  /** A message for the operator (a record passed over). */
  warn(message: string): void;
  /** A problem a read passed over, told once a command (on stderr, and in `--json`'s `warnings`). */
  tellDamage(damage: { file: string; line: number; reason: string }, message: string): void;
}

/** What a write transaction (pg-transaction.ts) needs of the store besides: its folds, and the commit's note. */
export interface PgWriter extends PgHost {
  /** What the running transaction wrote, for the commit log once COMMIT is acknowledged. */
  readonly committing: string[];
  /** The chain heads the running transaction leaves, taken as seen once COMMIT is acknowledged (pg-seen-heads.ts). */
  readonly committingHeads: { file: string; head: ChainHead }[];
  foldWhole<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<{ state: S; scan: RowScan; line: number }>;
  foldKeys<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, keys: readonly string[]): Promise<{ state: S }>;
  foldIndexed<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, query: IndexQuery): Promise<{ state: S }>;
  foldTerms<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, query: TermQuery): Promise<{ state: S } | undefined>;
}

/** Replaces every row of a journal with the lines of `text` (repair, compaction); returns its bytes. */
export async function replaceRows(store: PgHost, sql: Sql, spec: StoreSpec<unknown>, text: string): Promise<number> {
  await sql.unsafe(`delete from ${store.ident(journalTable(spec.file))}`);
  await store.insertLines(sql, spec, text.split('\n').slice(0, -1), 0);
  return Buffer.byteLength(text);
}
