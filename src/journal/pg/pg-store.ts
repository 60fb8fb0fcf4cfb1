// A shared store on PostgreSQL (SPEC §11): the journals as tables behind the same boundary as a data directory.
//
// Rows keep each record's line byte for byte, so the format, sequence and hash chain are those of a file and are
// verified the same way. Every write is one database transaction under a transaction-scoped advisory lock per
// store: `decide` reads what committed before the lock, and its records (and the schema, on the first write)
// commit together or not at all. A killed writer's transaction is rolled back by the server.
//
// Longer than 300 lines: the connection's state (one connection, its queue, the transaction running, a lost
// connection failing what runs on it) is shared by every read path (whole, snapshot, by key, indexed) kept here;
// the transaction, the keys, check, compaction, survey, init and copy are files of their own.
import { decodeOwn, decodeRecord, EMPTY_HEAD, VERIFY_ALL, type ChainHead, type JournalRecord } from '../record';
import { SNAPSHOT_EVENT, type LinePosition } from '../scan';
import type { IndexQuery, StoreSpec } from '../store-spec';
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
} from '../store-boundary';
import { holdLockForTest } from '../crash-point';
import { noteCommit } from '../../shared/commit-log';
import { CruxError } from '../../shared/errors';
import { connectionLost, openClient, storeError, type Client, type Sql } from './client';
import { arrayLiteral, ensureJournalTable, journalTable, migrate, readCatalog, refuseNewer, type Catalog } from './schema';
import { rowPosition, RowVerifier, type RowScan } from './rows';
import { compactJournals, historyPieces, readHistoryRows, restoreJournal } from './pg-maintenance';
import { checkJournals } from './pg-check';
import { surveyPg } from './pg-survey';
import type { PgWriter } from './pg-host';
import { PgTransaction } from './pg-transaction';
import { PgKeyStore } from './pg-keys';
import { DEFAULT_HISTORY_RETENTION, type HistoryRetention } from '../history';
import { indexCurrent, matchingKeys, writeIndexRows } from './pg-index';
import { initSchema } from './pg-init';
import { loadPgSnapshot, savePgSnapshot, SNAPSHOT_AFTER_ROWS } from './pg-snapshot';
import type { StoreUrl } from './url';

/** The first half of every crux advisory lock key ('crux'); the second is the schema name's hash. */
const LOCK_CLASS = 0x63727578;
/** Rows fetched per round trip when a whole journal is read. */
const FETCH_ROWS = 5000;
/** Rows inserted per statement. */
const INSERT_ROWS = 5000;

type Query = Sql;

interface Folded<S> {
  state: S;
  scan: RowScan;
  ms: number;
}

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

export class PgStore implements JournalStore, PgWriter {
  readonly location: string;
  readonly keys: KeyStore;
  private client: Client | undefined;
  private catalog: Catalog | undefined;
  /** The transaction `write` is running, if any: key items created meanwhile join it (one connection, one lock). */
  private active: Sql | undefined;
  /** What the running transaction wrote, for noteCommit once COMMIT is acknowledged. */
  readonly committing: string[] = [];
  /** Operations running now (close waits for them). */
  private readonly inflight = new Set<Promise<unknown>>();
  /** Which journals' index rows verified in the operation running (pg-index.ts), by file. */
  private readonly verdicts = new Map<string, boolean>();
  /** Fails the operation running now (the connection was lost under it); see untilLost. */
  private failRunning: ((error: Error) => void) | undefined;
  /**
   * The store has one connection, so its operations run one at a time: `crux mcp` runs tool calls concurrently,
   * and two calls' statements interleaved on one connection would run inside each other's transaction (a put
   * answered "stored" inside a transaction that another call's error then rolled back). A call made from
   * inside the running operation (a key created while a write decides, a read within it) joins it instead.
   */
  private queue: Promise<void> = Promise.resolve();
  private readonly within = new (require('node:async_hooks') as typeof import('node:async_hooks')).AsyncLocalStorage<PgStore>();

  constructor(
    readonly url: StoreUrl,
    private readonly opts: PgStoreOptions,
  ) {
    this.location = url.schema === 'crux' ? url.label : `${url.label}?schema=${url.schema}`;
    this.keys = new PgKeyStore(this);
  }

  /** The connection, opened on first use. */
  get sql(): Sql {
    // A connection lost between transactions (a long-lived `crux mcp`, a restarted server) is replaced; one lost
    // inside a transaction is not (client.ts), so that transaction fails as a whole.
    if (this.client?.lost && this.active === undefined) this.dropClient();
    this.client ??= openClient(this.url, { lockTimeoutMs: this.opts.lockTimeoutMs, onLost: (error) => this.failRunning?.(error) });
    return this.client.sql;
  }

  private dropClient(): void {
    const client = this.client;
    this.client = undefined;
    void client?.end(0).catch(() => {});
  }

  /** A quoted `schema.table`. */
  ident(table: string): string {
    return `"${this.url.schema}".${table}`;
  }

  /**
   * Ends the connection (at the end of every command), once the operations still running have finished: a server
   * whose input ended (`crux mcp`) may still be answering a call.
   */
  async close(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await client.end(1).catch(() => {});
  }

  /**
   * Runs `fn` alone on the connection (see `queue`), or at once when called from the operation running. Each
   * operation reads the catalog afresh: a long-lived process (`crux mcp`) must see the tables another process
   * created since its last call.
   */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.within.getStore() === this) return fn();
    const before = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    return before
      .then(() => {
        this.catalog = undefined;
        this.verdicts.clear();
        return this.within.run(this, () => this.untilLost(fn));
      })
      .finally(release);
  }

  /**
   * Runs `fn`, failing it as soon as the connection is lost. The client does not always settle the statement it
   * was waiting on when its socket goes (a server that went silent, then was cut off): a promise left pending
   * with nothing else to wait for would let the process exit 0 with nothing committed, an acknowledgement of a
   * write that never happened. So the store settles the operation itself, and forgets the transaction it ran.
   */
  private untilLost<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.failRunning = (error) => {
        this.active = undefined;
        this.catalog = undefined;
        this.committing.length = 0;
        this.dropClient();
        reject(error);
      };
      fn().then(resolve, reject);
    }).finally(() => {
      this.failRunning = undefined;
    });
  }

  /** Runs `fn`, turning failures of the server or the network into their CruxError (exit 75). */
  async guard<T>(fn: () => Promise<T>): Promise<T> {
    const running = this.exclusive(fn);
    this.inflight.add(running);
    try {
      return await running;
    } catch (error) {
      // A connection that failed is not used again: the next operation opens a new one.
      if (connectionLost(error) && this.active === undefined) this.dropClient();
      throw storeError(error, this.url, this.opts.lockTimeoutMs) ?? error;
    } finally {
      this.inflight.delete(running);
    }
  }

  /**
   * What reads go through: the running write transaction when there is one (the connection is busy with it, and
   * it sees its own rows), else the connection.
   */
  get reader(): Query {
    return this.active ?? this.sql;
  }

  /** The catalog for reads, read once per command; a schema a newer crux wrote is refused. */
  async readCatalog(): Promise<Catalog> {
    if (this.catalog === undefined) {
      this.catalog = await readCatalog(this.reader, this.url.schema);
      refuseNewer(this.catalog, this.location);
    }
    return this.catalog;
  }

  async read<S>(spec: StoreSpec<S>): Promise<S> {
    return this.guard(async () => (await this.foldWhole(this.reader, await this.readCatalog(), spec)).state);
  }

  async readWith<S, T>(spec: StoreSpec<S>, use: (state: S) => T | Promise<T>): Promise<T> {
    return use(await this.read(spec));
  }

  /**
   * The whole state for a query or a transaction's load: from the snapshot row and the rows after it when there
   * is a valid one, else a fold of every row. A reader that folded many rows keeps a new snapshot.
   */
  async foldWhole<S>(q: Query, catalog: Catalog, spec: StoreSpec<S>): Promise<Folded<S> & { line: number }> {
    const snapshot = await loadPgSnapshot(q, (t) => this.ident(t), catalog, spec);
    const started = performance.now();
    if (snapshot === undefined) {
      const folded = await this.fold(q, catalog, spec);
      const line = folded.scan.lastLine;
      if (folded.scan.lines >= SNAPSHOT_AFTER_ROWS && folded.scan.problems.length === 0) await this.keepSnapshot(spec, folded.state, line, folded.scan.head);
      return { ...folded, line };
    }
    const state = snapshot.state;
    const verifier = new RowVerifier(spec.vocabulary, (record, at) => spec.evolve(state, record, at), snapshot.head);
    await q
      .unsafe(`select line, body from ${this.ident(journalTable(spec.file))} where line > $1 order by line`, [snapshot.line])
      .values()
      .cursor(FETCH_ROWS, (rows) => {
        for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
      });
    const tail = verifier.finish();
    this.report(spec.file, tail);
    const line = tail.lines > 0 ? tail.lastLine : snapshot.line;
    if (tail.lines >= SNAPSHOT_AFTER_ROWS && tail.problems.length === 0) await this.keepSnapshot(spec, state, line, tail.head);
    return { state, scan: { ...tail, records: tail.records }, ms: performance.now() - started, line };
  }

  /** A reader's snapshot write: outside any transaction it is its own; when it cannot be written, the answer stands. */
  private async keepSnapshot<S>(spec: StoreSpec<S>, state: S, line: number, head: ChainHead): Promise<void> {
    if (spec.snapshot === undefined || this.active !== undefined) return;
    await savePgSnapshot(this.sql, (t) => this.ident(t), spec, state, line, head).catch(() => {});
  }

  async readKey<S>(spec: StoreSpec<S>, key: string): Promise<S> {
    return this.guard(async () => (await this.foldKeys(this.reader, await this.readCatalog(), spec, [key])).state);
  }

  async readIndexed<S>(spec: StoreSpec<S>, query: IndexQuery): Promise<S> {
    return this.guard(async () => (await this.foldIndexed(this.reader, await this.readCatalog(), spec, query)).state);
  }

  /** The entities that may match `query`, through the index table when its rows are current, else the whole journal. */
  async foldIndexed<S>(q: Query, catalog: Catalog, spec: StoreSpec<S>, query: IndexQuery): Promise<Folded<S>> {
    if (spec.keyOf === undefined || !(await this.indexTrusted(q, catalog, spec))) return this.fold(q, catalog, spec);
    return this.foldKeys(q, catalog, spec, await matchingKeys(q, (t) => this.ident(t), spec as StoreSpec<unknown>, query));
  }

  /**
   * Whether a journal's index rows verify (pg-index.ts), fully (asked once per operation: nothing else writes
   * meanwhile), or, for a write that only maintains them (`full` false), by their binding alone.
   */
  async indexTrusted<S>(q: Query, catalog: Catalog, spec: StoreSpec<S>, full = true): Promise<boolean> {
    const known = this.verdicts.get(spec.file);
    if (known !== undefined) return known;
    const verdict = await indexCurrent(q, (t) => this.ident(t), catalog, spec as StoreSpec<unknown>, full);
    if (full) this.verdicts.set(spec.file, verdict);
    return verdict;
  }

  /**
   * Brings the index rows of a journal up to date inside a locked transaction, after its rows changed: the
   * entities `keys` (from their rows as they now are) when the rows verified before the change (`trusted`), else
   * — or with 'all' — every entity (from `whole`, or a fold of the journal): rebuilt in the same transaction.
   */
  async refreshIndex<S>(
    sql: Sql,
    catalog: Catalog,
    spec: StoreSpec<S>,
    keys: readonly string[] | 'all',
    opts: { trusted?: boolean; whole?: S } = {},
  ): Promise<void> {
    if (spec.secondary === undefined || spec.keyOf === undefined) return;
    const ident = (t: string) => this.ident(t);
    const { line, head } = await this.headOf(sql, catalog, spec.file);
    const bound = { line, h: line === 0 ? '' : head.h };
    if (keys !== 'all' && opts.trusted === true) {
      if (keys.length > 0) await writeIndexRows(sql, ident, spec, (await this.foldKeys(sql, catalog, spec, keys)).state, keys, false, bound);
    } else {
      const state = opts.whole ?? (await this.fold(sql, catalog, spec, { quiet: true })).state;
      const rows = await sql.unsafe<{ key: string }[]>(`select distinct key from ${this.ident(journalTable(spec.file))} where key is not null`);
      await writeIndexRows(
        sql,
        ident,
        spec,
        state,
        rows.map((r) => r.key),
        true,
        bound,
      );
    }
    this.verdicts.set(spec.file, true);
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
    return this.locked(async (sql, catalog) => {
      const tx = new PgTransaction(this, sql, catalog, ts);
      const result = await decide(tx);
      await tx.commit();
      return result;
    });
  }

  /**
   * Runs `fn` in one transaction holding the store's writers' lock (waiting at most CRUX_LOCK_TIMEOUT), with the
   * catalog as of the lock. A nested call (a key created while `write` decides) joins the running transaction.
   */
  async locked<T>(fn: (sql: Sql, catalog: Catalog) => Promise<T>): Promise<T> {
    if (this.active !== undefined && this.within.getStore() === this) {
      const active = this.active;
      try {
        return await fn(active, await readCatalog(active, this.url.schema));
      } finally {
        this.catalog = undefined;
      }
    }
    return this.transaction(async (sql) => {
      await sql`select pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(${this.url.schema}))`;
      const catalog = await readCatalog(sql, this.url.schema);
      refuseNewer(catalog, this.location);
      await holdLockForTest();
      this.active = sql;
      this.catalog = catalog;
      try {
        return await fn(sql, catalog);
      } finally {
        this.active = undefined;
        this.catalog = undefined;
      }
    });
  }

  /**
   * Runs `fn` in one transaction on the store's one connection, which is never reconnected (client.ts): every
   * statement `fn` issues is in the transaction, or fails.
   */
  async transaction<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    return this.guard(async () => {
      const sql = this.sql;
      await sql`begin`;
      try {
        const result = await fn(sql);
        // PostgreSQL answers COMMIT of a transaction that an earlier statement aborted with the tag ROLLBACK, not
        // an error: only the tag COMMIT acknowledges the write (anything else exits 75, nothing was changed).
        const outcome = await sql`commit`;
        if (outcome.command !== 'COMMIT') {
          throw new CruxError('store_unavailable', `the PostgreSQL store ${this.location} rolled the transaction back (${outcome.command})`);
        }
        if (this.committing.length > 0) noteCommit(this.committing.splice(0).join(', '));
        return result;
      } catch (error) {
        this.committing.length = 0;
        // A lost connection's transaction was rolled back by the server; a live one is rolled back here.
        if (this.client !== undefined && !this.client.lost) await sql`rollback`.catch(() => {});
        throw error;
      }
    });
  }

  /** The lock's key, for doctor: the same two numbers every crux takes for this schema. */
  static readonly LOCK_CLASS = LOCK_CLASS;

  /** Creates the schema (first write) and the journal's table (its first record), inside a locked transaction. */
  async prepare(sql: Sql, catalog: Catalog, file: string): Promise<Catalog> {
    const current = await migrate(sql, this.url.schema, catalog, this.opts.cruxVersion);
    await ensureJournalTable(sql, this.url.schema, current, file);
    return current;
  }

  /** Folds a whole journal, verifying every row; problems go to the reporter unless quiet. */
  async fold<S>(q: Query, catalog: Catalog, spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink } = {}): Promise<Folded<S>> {
    const started = performance.now();
    const state = spec.initial();
    const verifier = new RowVerifier(spec.vocabulary, (record, at) => spec.evolve(state, record, at));
    const table = journalTable(spec.file);
    if (catalog.tables.has(table)) {
      const total = opts.progress === undefined ? 0 : await this.count(q, table);
      await q
        .unsafe(`select line, body from ${this.ident(table)} order by line`)
        .values()
        .cursor(FETCH_ROWS, (rows) => {
          for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
          opts.progress?.(spec.file, verifier.visited, total);
        });
    }
    const scan = verifier.finish();
    if (!opts.quiet) this.report(spec.file, scan);
    return { state, scan, ms: performance.now() - started };
  }

  /**
   * Folds only the rows of the entities `keys`, from each key's last resetting record on (the database's
   * index by key): what a command on one session or case reads. Rows are verified one by one (the chain is
   * verified by whole reads and `journal check`).
   */
  async foldKeys<S>(q: Query, catalog: Catalog, spec: StoreSpec<S>, keys: readonly string[]): Promise<Folded<S>> {
    if (spec.keyOf === undefined) return this.fold(q, catalog, spec);
    const started = performance.now();
    const state = spec.initial();
    const table = journalTable(spec.file);
    const problems: RowScan['problems'] = [];
    let records = 0;
    if (catalog.tables.has(table)) {
      const t = this.ident(table);
      const rows = await q.unsafe<{ line: string; body: string }[]>(
        `select r.line, r.body from unnest($1::text[]) as k(key)
           cross join lateral (select coalesce(max(line), 0) as since from ${t} where key = k.key and resets) s
           join ${t} r on r.key = k.key and r.line >= s.since
         order by r.line`,
        [arrayLiteral(keys)],
      );
      for (const { line, body } of rows) {
        const decoded = decodeRecord(body, VERIFY_ALL);
        if (!decoded.ok) {
          problems.push({ line: Number(line), reason: decoded.reason, skipped: true });
          continue;
        }
        if (!spec.vocabulary.has(decoded.record.ev)) continue;
        records += 1;
        spec.evolve(state, decoded.record, rowPosition(Number(line), body));
      }
    }
    const scan: RowScan = { records, lines: records, bytes: 0, problems, head: { seq: 0, h: '' }, lastLine: 0 };
    this.report(spec.file, scan);
    return { state, scan, ms: performance.now() - started };
  }

  /** The last row of a journal: the chain head a new batch continues, and its line. */
  async headOf(q: Query, catalog: Catalog, file: string): Promise<{ head: ChainHead; line: number }> {
    const table = journalTable(file);
    if (!catalog.tables.has(table)) return { head: EMPTY_HEAD, line: 0 };
    const [row] = await q.unsafe<{ line: string; seq: string; h: string }[]>(`select line, seq, h from ${this.ident(table)} order by line desc limit 1`);
    return row === undefined ? { head: EMPTY_HEAD, line: 0 } : { head: { seq: Number(row.seq), h: row.h }, line: Number(row.line) };
  }

  /**
   * Inserts encoded lines after `line`, INSERT_ROWS a statement: every statement stays short, so that a server
   * silent past the client's bound (client.ts) has stopped answering, whatever the size of the batch.
   */
  async insertLines<S>(q: Sql, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void> {
    // A batch of many statements (an import) tells its progress, as a data directory's write does (one Reporter).
    const progress = lines.length > INSERT_ROWS ? this.opts.reporter.progress?.bind(this.opts.reporter) : undefined;
    for (let i = 0; i < lines.length; i += INSERT_ROWS) {
      progress?.('writing', i, lines.length);
      await this.insertSome(q, spec, lines.slice(i, i + INSERT_ROWS), afterLine + i);
    }
    progress?.('writing', lines.length, lines.length);
  }

  private async insertSome<S>(q: Sql, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void> {
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
      const key = record.ev === SNAPSHOT_EVENT ? undefined : spec.keyOf?.(record);
      keys[i] = key ?? null;
      resets[i] = key !== undefined && spec.resets?.(record) === true;
    }
    await q.unsafe(
      `insert into ${this.ident(journalTable(spec.file))} (line, seq, h, body, key, resets)
       select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[])`,
      [arrayLiteral(lineNos), arrayLiteral(seqs), arrayLiteral(hashes), arrayLiteral(lines), arrayLiteral(keys), arrayLiteral(resets)],
    );
  }

  private async count(q: Query, table: string): Promise<number> {
    const [row] = await q.unsafe<{ n: string }[]>(`select count(*) as n from ${this.ident(table)}`);
    return Number(row?.n ?? 0);
  }

  private report(file: string, scan: RowScan): void {
    for (const problem of scan.problems) {
      this.opts.reporter.warn(`${this.location} ${journalTable(file)}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`);
      this.opts.reporter.damage?.(file, problem.line, problem.reason);
    }
  }

  async check(specs: readonly StoreSpec<unknown>[], opts: { repair: boolean; ts: string; progress?: ProgressSink }): Promise<JournalReport[]> {
    return checkJournals(this, specs, opts);
  }

  async compact(specs: readonly StoreSpec<unknown>[], ts: string, progress?: ProgressSink, opts: { dropHistory?: boolean } = {}): Promise<CompactReport[]> {
    return compactJournals(this, specs, ts, { progress, dropHistory: opts.dropHistory, retention: this.opts.history ?? DEFAULT_HISTORY_RETENTION });
  }

  async readHistory<S>(spec: StoreSpec<S>, sink: (record: JournalRecord, at: LinePosition) => void): Promise<void> {
    return this.guard(async () => readHistoryRows(this, this.reader, await this.readCatalog(), spec, sink));
  }

  /** A message for the operator (a record passed over). */
  warn(message: string): void {
    this.opts.reporter.warn(message);
  }

  async survey(specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
    return surveyPg(this, specs);
  }

  async init(opts: { print: boolean }): Promise<InitReport> {
    return initSchema(this, this.opts.specs, this.opts.cruxVersion, opts.print);
  }

  async *rawLines(file: string): AsyncIterable<Uint8Array> {
    const catalog = await this.guard(() => this.readCatalog());
    const table = journalTable(file);
    if (!catalog.tables.has(table)) return;
    let after = 0;
    for (;;) {
      const rows = await this.guard(() =>
        this.sql.unsafe<{ line: string; body: string }[]>(`select line, body from ${this.ident(table)} where line > $1 order by line limit ${FETCH_ROWS}`, [
          after,
        ]),
      );
      for (const row of rows) yield Buffer.from(row.body);
      if (rows.length < FETCH_ROWS) return;
      after = Number(rows.at(-1)!.line);
    }
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
    return this.guard(async () => {
      const sql = this.sql;
      await sql`begin isolation level repeatable read read only`;
      this.active = sql;
      try {
        const catalog = await readCatalog(sql, this.url.schema);
        refuseNewer(catalog, this.location);
        const view: StoreView = {
          lines: (file) => this.cursorLines(sql, catalog, file),
          history: (file) => historyPieces(this, sql, catalog, file),
        };
        const result = await use(view);
        await sql`commit`;
        return result;
      } catch (error) {
        if (this.client !== undefined && !this.client.lost) await sql`rollback`.catch(() => {});
        throw error;
      } finally {
        this.active = undefined;
      }
    });
  }

  private async *cursorLines(sql: Sql, catalog: Catalog, file: string): AsyncIterable<Uint8Array> {
    const table = journalTable(file);
    if (!catalog.tables.has(table)) return;
    for await (const rows of sql
      .unsafe(`select body from ${this.ident(table)} order by line`)
      .values()
      .cursor(FETCH_ROWS)) {
      for (const [body] of rows as [string][]) yield Buffer.from(body);
    }
  }
}
