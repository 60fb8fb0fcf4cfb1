// A shared store on PostgreSQL (SPEC §11): the journals as tables behind the same boundary as a data directory.
// (Past 300 lines: the whole boundary of one kind of store, as data-dir.ts is for a data directory.)
//
// Rows keep each record's line byte for byte, so the format, sequence and hash chain are those of a file and are
// verified the same way. Every write is one database transaction under a transaction-scoped advisory lock per
// store: `decide` reads what committed before the lock, and its records (and the schema, on the first write)
// commit together or not at all. A killed writer's transaction is rolled back by the server.
//
// The connection and its transactions are pg-connection.ts, the folds pg-fold.ts; this file is the boundary's methods and the
// derived index rows' place in them. The transaction, the keys, check, compaction, survey, init and copy are files of their own.
import { decodeRecord, VERIFY_ALL, type JournalRecord } from '../codec/record';
import type { LinePosition } from '../codec/scan';
import type { IndexQuery, NewestQuery, StoreSpec, TermHit } from '../codec/store-spec';
import type { TermCounts, TermRowsQuery } from '../codec/term-queries';
import type {
  CompactReport,
  HistoryPiece,
  InitReport,
  JournalReport,
  JournalStore,
  StoreView,
  KeyStore,
  ProgressSink,
  Reporter,
  StoreFacts,
  Transaction,
} from '../core/store-boundary';
import type { Sql } from './client';
import { CruxError } from '../../shared/errors';
import { reportDamage } from '../codec/reporting';
import { arrayLiteral, ensureJournalTable, indexTable, journalTable, migrate, readCatalog, type Catalog } from './schema';
import { consistentView, initSchema, pagedLines, restoreJournal, surveyPg } from './pg-maintenance';
import { checkJournals } from '../core/check';
import { rewriteRecords } from '../core/rewrite';
import { compactJournals } from '../core/compact';
import { DEFAULT_HISTORY_RETENTION, readHistory, type HistoryRetention } from '../core/history';
import type { LineStore } from '../core/line-store';
import { PgLines } from './pg-lines';
import { pgPieceKeyReader } from './pg-history-keys';
import { refreshDerived, type RefreshOpts } from './pg-reindex';
import type { DerivedTrust, PgWriter, TermQuery } from './pg-host';
import { insertLines, PgTransaction } from './pg-transaction';
import { PgKeyStore, settleReading, settleSealing, warnIgnoredKey } from './pg-store-key';
import { indexCurrent, keepsIndexRows, matchingKeys, readNewestRows, readPrefixRows } from './pg-index';
import { readTallyRows } from './pg-tally';
import { matchTerms, termRows, termsCurrent } from './pg-terms';
import { countTerms } from './pg-term-counts';
import { PgReads, type Folded } from './pg-fold';
import type { StoreUrl } from './url';
import type { PgLink } from './pg-link';

export interface PgStoreOptions {
  readonly reporter: Reporter;
  readonly lockTimeoutMs: number;
  /** Written into schema_version with each migration. */
  readonly cruxVersion: string;
  /** Every journal the store may hold (restore needs a journal's entity keys). */
  readonly specs: readonly StoreSpec<any>[];
  /** How long and how much of `history` compaction keeps (CRUX_HISTORY_KEEP, CRUX_HISTORY_MAX_BYTES). */
  readonly history?: HistoryRetention | undefined;
}

export class PgStore extends PgReads implements JournalStore, PgWriter {
  readonly keys: KeyStore;
  /** The store as check, compaction and history reads (core/) see it: its journals' rows, in one locked transaction. */
  readonly lineStore: LineStore = {
    locked: (fn) => this.locked((sql, catalog) => fn(new PgLines(this, sql, catalog, this.retention))),
  };

  constructor(
    url: StoreUrl,
    private readonly opts: PgStoreOptions,
    link?: PgLink,
  ) {
    super(url, opts.lockTimeoutMs, opts.reporter, link);
    this.keys = new PgKeyStore(this);
  }

  /**
   * This store for another caller (each call of `crux mcp`, each request of `crux ui`): the same connection and
   * queue of operations, what it meets told to `reporter`, and its calls made from inside its own operation joining it
   * (pg-connection.ts, exclusive).
   */
  forCaller(reporter: Reporter): PgStore {
    return new PgStore(this.url, { ...this.opts, reporter }, this.link);
  }

  /** Which journals' derived rows are trusted in the operation running (pg-trust.ts), by file. */
  private get verdicts(): Map<string, DerivedTrust> {
    return this.link.verdicts;
  }

  protected override forget(): void {
    super.forget();
    this.verdicts.clear();
  }

  /** Runs `read` as one operation (or within the running one), over what reads go through and the catalog. */
  private reading<T>(read: (q: Sql, catalog: Catalog) => Promise<T>): Promise<T> {
    return this.guard(async () => read(this.reader, await this.readCatalog()));
  }

  /** Whether a journal of entities has index rows that can be trusted (else a read folds it whole). */
  private async indexed<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<boolean> {
    return spec.keyOf !== undefined && (await this.derivedTrusted(q, catalog, spec)).index;
  }

  async read<S>(spec: StoreSpec<S>): Promise<S> {
    return this.reading(async (q, catalog) => (await this.foldWhole(q, catalog, spec)).state);
  }

  async readWith<S, T>(spec: StoreSpec<S>, use: (state: S) => T | Promise<T>): Promise<T> {
    return use(await this.read(spec));
  }

  async readKey<S>(spec: StoreSpec<S>, key: string): Promise<S> {
    return this.reading(async (q, catalog) => (await this.foldKeys(q, catalog, spec, [key])).state);
  }

  async readIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.reading(async (q, catalog) => (await this.foldIndexed(q, catalog, spec, query)).state);
  }

  /** The entities that may match `query`, through the index table when its rows are current, else the whole journal. */
  async foldIndexed<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, query: IndexQuery): Promise<Folded<S>> {
    if (!(await this.indexed(q, catalog, spec))) return this.fold(q, catalog, spec);
    return this.foldKeys(q, catalog, spec, await matchingKeys(q, this.ident, spec as StoreSpec<unknown>, query));
  }

  /** The entities with the highest values of an ordered key (a limited list): pg-index.ts, else the whole state. */
  async readNewest<S>(spec: StoreSpec<S>, query: NewestQuery, enough: (state: S) => boolean): Promise<{ state: S; total: number | undefined }> {
    return this.reading(async (q, catalog) => {
      if (!(await this.indexed(q, catalog, spec))) return { state: (await this.foldWhole(q, catalog, spec)).state, total: undefined };
      return readNewestRows(q, this.ident, spec, query, enough, async (keys) => (await this.foldKeys(q, catalog, spec, keys)).state);
    });
  }

  /** The entities whose prefixed value starts with `query.prefix`, in order (completion): pg-index.ts, else the whole state. */
  async readPrefix<S>(spec: StoreSpec<S>, query: { readonly index: string; readonly prefix: string }, enough: (state: S) => boolean): Promise<S> {
    return this.reading(async (q, catalog) => {
      if (!(await this.indexed(q, catalog, spec))) return (await this.foldWhole(q, catalog, spec)).state;
      return readPrefixRows(q, this.ident, spec, query, enough, async (keys) => (await this.foldKeys(q, catalog, spec, keys)).state);
    });
  }

  /** StoreSpec.tally's counts of the hours `from` to `to` from the index's rows (pg-tally.ts) when trusted, else undefined. */
  async readTally(spec: StoreSpec<unknown>, from: number, to: number): Promise<number[][] | undefined> {
    return this.reading(async (q, catalog) => {
      if (spec.tally === undefined || !(await indexCurrent(q, this.ident, catalog, spec))) return undefined;
      return readTallyRows(q, this.ident(indexTable(journalTable(spec.file))), from, to, spec.tally.series.length);
    });
  }

  private get files(): string[] {
    return this.opts.specs.map((s) => s.file);
  }

  /** The catalog; the first time a process reads with a key given, whether a plain store ignores it (one warning). */
  override async readCatalog(): Promise<Catalog> {
    const catalog = await super.readCatalog();
    if (!this.link.keyTold) {
      this.link.keyTold = true;
      await warnIgnoredKey({ store: this, sql: this.reader, catalog, files: this.files });
    }
    return catalog;
  }

  /** What the store is for a read that derives its terms from the key (store-boundary.ts): its key-id row, read now. */
  async settleSealMode(): Promise<void> {
    await this.reading((sql, catalog) => settleReading({ store: this, sql, catalog }));
  }

  /**
   * A state of only the entities holding the query's terms, from the term rows when they can be trusted (a GIN
   * look-up: the cost follows the candidates), else the whole state.
   */
  async readTerms<S, T>(spec: StoreSpec<S>, query: TermQuery, use: (state: S) => T | Promise<T>): Promise<T> {
    const some = await this.reading((q, catalog) => this.foldTerms(q, catalog, spec, query));
    return some === undefined ? this.readWith(spec, use) : use(some.state);
  }

  /** The candidates of a query over terms, from trusted term rows; undefined when there are none to trust. */
  async foldTerms<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, query: TermQuery): Promise<{ state: S } | undefined> {
    const codec = spec.terms;
    if (codec === undefined || !(await this.derivedTrusted(q, catalog, spec)).terms) return undefined;
    const among = query.among ?? [];
    const all = [...new Set([...query.terms, ...among])];
    const hits = query.terms.length === 0 ? [] : await matchTerms(q, this.ident, spec as StoreSpec<unknown>, all, query.terms, among);
    return { state: codec.fromHits(all, hits) };
  }

  /** Counts by term (success by tag), when the term rows can be trusted (pg-term-counts.ts countTerms). */
  async countTerms<S>(
    spec: StoreSpec<S>,
    query: { readonly prefix: string; readonly where: { readonly fact: number; readonly equals: string } },
  ): Promise<TermCounts | undefined> {
    return this.termsReading(spec, (q, catalog) => countTerms(q, this.ident, catalog, spec as StoreSpec<unknown>, query));
  }

  /** A page of the term rows (a limited case list), when they can be trusted (pg-terms.ts termRows). */
  async readTermRows<S>(spec: StoreSpec<S>, query: TermRowsQuery): Promise<{ hits: TermHit[]; total: number | undefined } | undefined> {
    return this.termsReading(spec, (q, catalog) => termRows(q, this.ident, catalog, spec as StoreSpec<unknown>, query));
  }

  /** Runs `read` as one operation over a journal's term rows when they can be trusted; else undefined. */
  private termsReading<S, T>(spec: StoreSpec<S>, read: (q: Sql, catalog: Catalog) => Promise<T>): Promise<T | undefined> {
    return this.reading(async (q, catalog) => (spec.terms !== undefined && (await this.derivedTrusted(q, catalog, spec)).terms ? read(q, catalog) : undefined));
  }

  /**
   * Whether a journal's index rows and term rows can be trusted (pg-trust.ts): one look-up each, asked once per
   * operation (a write asks before its rows go in, and keeps the answer: it then maintains what it trusted).
   */
  async derivedTrusted<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<DerivedTrust> {
    const known = this.verdicts.get(spec.file);
    if (known !== undefined) return known;
    const ident = this.ident;
    const verdict = {
      index: keepsIndexRows(spec) && (await indexCurrent(q, ident, catalog, spec as StoreSpec<unknown>)),
      terms: spec.terms !== undefined && (await termsCurrent(q, ident, catalog, spec as StoreSpec<unknown>)),
    };
    this.verdicts.set(spec.file, verdict);
    return verdict;
  }

  /**
   * Only the rows of the entities `keys` (pg-fold.ts), found by the journal's `key` and `resets` columns, when those
   * can be trusted: no one but crux wrote the journal since its derived rows were bound (pg-trust.ts). Else the
   * whole journal, verified as a replay verifies it, so that a row edited, deleted or inserted by hand changes
   * nothing and is told as a replay tells it. A journal without derived rows (none of crux's: a test's) has no
   * binding to say so, and is read by key.
   */
  override async foldKeys<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, keys: readonly string[]): Promise<Folded<S>> {
    if (spec.keyOf === undefined || (spec.secondary === undefined && spec.terms === undefined)) return super.foldKeys(q, catalog, spec, keys);
    // Asked together (one round trip, the connection pipelines them); the rows by key are told only when believed.
    const [trusted, some] = await Promise.all([this.keysTrusted(q, catalog, spec), super.foldKeys(q, catalog, spec, keys, { quiet: true })]);
    if (!trusted) return this.foldWhole(q, catalog, spec);
    this.report(spec.file, some.scan);
    return some;
  }

  /**
   * Whether a journal's `key` and `resets` columns may be believed (foldKeys): its derived rows are bound to it and
   * trusted (pg-trust.ts); undefined for a journal without derived rows, which has no binding to say so.
   */
  private async keysTrusted<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<boolean | undefined> {
    if (spec.secondary === undefined && spec.terms === undefined) return undefined;
    const trust = await this.derivedTrusted(q, catalog, spec);
    return spec.secondary !== undefined ? trust.index : trust.terms;
  }

  /** Brings the derived rows of a journal up to date after its rows changed, and trusts them again (pg-reindex.ts). */
  async refreshIndex<S>(sql: Sql, catalog: Catalog, spec: StoreSpec<S>, keys: readonly string[] | 'all', opts: RefreshOpts = {}): Promise<void> {
    if (await refreshDerived(this, sql, catalog, spec, keys, opts)) {
      this.verdicts.set(spec.file, { index: keepsIndexRows(spec), terms: spec.terms !== undefined });
    }
  }

  async readAt<S>(spec: StoreSpec<S>, positions: readonly LinePosition[]): Promise<(JournalRecord | undefined)[]> {
    return this.guard(async () => {
      const catalog = await this.readCatalog();
      if (!catalog.tables.has(journalTable(spec.file)) || positions.length === 0) return positions.map(() => undefined);
      const rows = await this.reader.unsafe<{ line: string; body: string }[]>(
        `select line, body from ${this.ident(journalTable(spec.file))} where line = any($1::bigint[])`,
        [arrayLiteral(positions.map((p) => p.line))],
      );
      const byLine = new Map(rows.map((r) => [Number(r.line), r.body]));
      return positions.map((p) => {
        const body = byLine.get(p.line);
        if (body === undefined || Buffer.byteLength(body) !== p.length) return undefined;
        const decoded = decodeRecord(body, VERIFY_ALL);
        return decoded.ok ? decoded.record : undefined;
      });
    });
  }

  async write<T>(decide: (tx: Transaction) => T | Promise<T>, ts: string): Promise<T> {
    let due: StoreSpec<any>[] = [];
    const result = await this.locked(async (sql, catalog) => {
      // What the write seals with is read under the lock (the cipher asks synchronously as it appends).
      const sealing = await settleSealing({ store: this, sql, catalog, files: this.files });
      const tx = new PgTransaction(this, sql, catalog, ts, sealing.record);
      const result = await decide(tx);
      await tx.commit();
      due = tx.due;
      return result;
    });
    // Committed: a journal the write took past the rule is compacted now, in a transaction of its own (pg-autocompact.ts).
    if (due.length > 0 && this.active === undefined) await this.compactAfterWrite(due, ts);
    return result;
  }

  /**
   * Automatic compaction after a committed write. The write stands whatever happens here: a compaction that cannot
   * run (the lock held past its bound, the server gone) is said once, and the next write that finds the journal
   * due tries again.
   */
  private async compactAfterWrite(due: StoreSpec<any>[], ts: string): Promise<void> {
    try {
      await compactJournals(this.lineStore, due, ts, { auto: true });
    } catch (error) {
      if (!(error instanceof CruxError)) throw error;
      this.warn(`${this.location}: automatic compaction of ${due.map((s) => s.file).join(', ')} did not run (${error.message}); the write is committed`);
    }
  }

  /** Creates the schema (first write) and the journal's table (its first record), inside a locked transaction. */
  async prepare(sql: Sql, catalog: Catalog, file: string): Promise<Catalog> {
    // A call that joined this transaction (a key created while the write decided) may have made the schema since
    // `catalog` was read: read it again, or the migration would create its tables a second time.
    const known = this.link.schemaMoved ? await readCatalog(sql, this.url.schema) : catalog;
    this.link.schemaMoved = false;
    const current = await migrate(sql, this.url.schema, known, this.opts.cruxVersion);
    await ensureJournalTable(sql, this.url.schema, current, file);
    return current;
  }

  async insertLines<S>(q: Sql, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void> {
    return insertLines(q, this.ident, this.reporter, spec, lines, afterLine);
  }

  async check(specs: readonly StoreSpec<unknown>[], opts: { repair: boolean; ts: string; progress?: ProgressSink }): Promise<JournalReport[]> {
    return checkJournals(this.lineStore, specs, opts);
  }

  async compact(specs: readonly StoreSpec<unknown>[], ts: string, progress?: ProgressSink, opts: { dropHistory?: boolean } = {}): Promise<CompactReport[]> {
    return compactJournals(this.lineStore, specs, ts, { progress, dropHistory: opts.dropHistory });
  }

  rewrite: JournalStore['rewrite'] = (specs, ts, transform, opts) => rewriteRecords(this.lineStore, specs, ts, transform, opts);

  /**
   * As DataDir's; with `key`, of the journal only its first row and the key's rows (pg-lines.ts keyRecords) when
   * they verify and no one but crux wrote the journal since its derived rows were bound (foldKeys' trust, O(1)).
   */
  async readHistory<S>(spec: StoreSpec<S>, sink: (record: JournalRecord, at: LinePosition) => void, { key }: { key?: string } = {}): Promise<void> {
    return this.guard(async () => {
      const catalog = await this.readCatalog();
      const lines = new PgLines(this, this.reader, catalog, this.retention, this.inTransaction(this.reader));
      const byKey = async (key: string) => {
        const trusted = await this.keysTrusted(this.reader, catalog, spec);
        return trusted === false ? undefined : lines.keyRecords(spec as StoreSpec<unknown>, key, { trusted: trusted === true });
      };
      const keyed = key !== undefined && catalog.tables.has('history') && catalog.version >= 6;
      const pieces = !keyed ? undefined : pgPieceKeyReader(this.reader, this.ident('history'), spec as StoreSpec<unknown>, key);
      return readHistory(lines, spec.file, spec.vocabulary, sink, key === undefined ? undefined : () => byKey(key), pieces);
    });
  }

  private get retention(): HistoryRetention {
    return this.opts.history ?? DEFAULT_HISTORY_RETENTION;
  }

  /** A message for the operator (a record passed over). */
  warn(message: string): void {
    this.reporter.warn(message);
  }

  tellDamage(damage: { file: string; line: number; reason: string }, message: string): void {
    reportDamage(this.reporter, damage, message);
  }

  async survey(specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
    return surveyPg(this, specs);
  }

  async init(opts: { print: boolean }): Promise<InitReport> {
    return initSchema(this, this.opts.specs, this.opts.cruxVersion, opts.print);
  }

  rawLines(file: string): AsyncIterable<Uint8Array> {
    return pagedLines(this, file);
  }

  async restore(file: string, lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, history: readonly HistoryPiece[] = []): Promise<void> {
    const spec = this.opts.specs.find((s) => s.file === file);
    if (spec === undefined) throw new Error(`restore: no journal ${file}`);
    return restoreJournal(this, spec, lines, history);
  }

  /**
   * `journal copy`'s source: one read-only repeatable-read transaction, so that every journal and its history are
   * read as of one moment while writers go on; each journal streams through a cursor (memory flat in its size).
   */
  async readConsistent<T>(use: (view: StoreView) => Promise<T>): Promise<T> {
    return this.consistent((sql, catalog) => use(consistentView(this, sql, catalog)));
  }
}
