// A PostgreSQL schema as the line store under the whole-journal operations (core/line-store.ts): a journal's rows
// and each compaction's history rows read through a cursor and verified as a file's lines are (pg-fold.ts scanRows), a
// journal replaced inside the locked transaction (its old rows moved to `history` first), the quarantine table
// for what is taken out. Everything runs in the caller's transaction: a rewrite commits whole or not at all.
import { decodeRecord, VERIFY_ALL, type JournalRecord } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { LinePosition } from '../codec/line';
import type { ProgressSink } from '../codec/reporting';
import { CruxError } from '../../shared/errors';
import type { HistoryRetention } from '../core/history';
import type {
  ArchivePlan,
  DerivedReport,
  Folded,
  HistoryGeneration,
  LinesProblem,
  LinesSource,
  ScanOptions,
  LockedLines,
  QuarantineItem,
  StagedRewrite,
} from '../core/line-store';
import type { Sql } from './client';
import { checkDerivedRows } from './pg-reindex';
import { replaceRows, type PgHost } from './pg-host';
import { PgRewriteSet, quarantineItems } from './pg-rewrite-set';
import { countAfterRewrite, stillDue } from './pg-autocompact';
import { rowPosition, rowRecord, scanRows } from './pg-fold';
import { journalTable, type Catalog } from './schema';
import { writeStoreKeyId } from './pg-store-key';

export class PgLines implements LockedLines {
  constructor(
    private readonly store: PgHost,
    private readonly sql: Sql,
    private readonly catalog: Catalog,
    private readonly retention: HistoryRetention,
    /** Whether `sql` runs a transaction (a paged read's cursor lives in it), or is the bare connection (a history read). */
    private readonly inTransaction = true,
  ) {}

  /** Rows as lines to verify: those `query` selects (line, body), in line order; none when `query` is undefined. */
  private rows(where: string, file: string, query: string | undefined, params: unknown[] = []): LinesSource {
    return {
      where,
      scan: async <T>(vocabulary: ReadonlySet<string>, sink: ((item: T, at: LinePosition) => void) | undefined, opts: ScanOptions<T> = {}) => {
        // What the caller keeps of a record is made as the record is folded (a database's batch is held as records).
        const keep = opts.keep ?? ((record: JournalRecord) => record as unknown as T);
        const take = sink === undefined ? undefined : (record: JournalRecord, at: LinePosition) => sink(keep(record, at), at);
        const progress = (visited: number) => opts.progress?.(file, visited, 0);
        // Each page its own statement (pg-fold.ts eachPage).
        const inTransaction = this.inTransaction;
        const scan = await scanRows(this.sql, query, params, vocabulary, take, { history: opts.history, progress, see: opts.see, inTransaction });
        return { exists: query !== undefined, ...scan };
      },
    };
  }

  private has(table: string): boolean {
    return this.catalog.tables.has(table);
  }

  journal(file: string): LinesSource {
    const table = journalTable(file);
    return this.rows(table, file, this.has(table) ? `select line, body from ${this.store.ident(table)} order by line` : undefined);
  }

  async history(file: string): Promise<HistoryGeneration[]> {
    if (!this.has('history')) return [];
    const history = this.store.ident('history');
    const generations = await this.sql.unsafe<{ generation: number }[]>(`select distinct generation from ${history} where journal = $1 order by generation`, [
      file,
    ]);
    const select = `select line, body from ${history} where journal = $1 and generation = $2 order by line`;
    return generations.map(({ generation }) => ({
      ...this.rows(`history/${file}#${generation}`, file, select, [file, generation]),
      id: String(generation),
      quarantine: async (ts: string) => {
        const rows = await this.sql.unsafe<{ body: string }[]>(select, [file, generation]);
        const name = await this.quarantine(file, `history-${generation}`, rows.map((r) => `${r.body}\n`).join(''), ts);
        await this.sql.unsafe(`delete from ${history} where journal = $1 and generation = $2`, [file, generation]);
        return name;
      },
    }));
  }

  /** The store's key id, recorded in the rewrite's transaction (pg-store-key.ts). */
  async recordStoreKey(keyId: string | null): Promise<void> {
    await writeStoreKeyId({ store: this.store, sql: this.sql, catalog: this.catalog }, keyId ?? undefined);
  }

  /** Told as a whole read tells it (pg-fold.ts report): the journal's problems under its file name, history's under its piece. */
  passedOver(file: string, where: string, p: LinesProblem): void {
    const journal = where === journalTable(file);
    this.store.tellDamage({ file: journal ? file : where, line: p.line, reason: p.reason }, `${this.store.location} ${where}:${p.line}: ${p.reason}`);
  }

  async fold<S>(spec: StoreSpec<S>, progress?: ProgressSink): Promise<Folded<S>> {
    const { state, scan } = await this.store.fold(this.sql, this.catalog, spec, { quiet: true, ...(progress ? { progress } : {}) });
    return { state, records: scan.records, bytes: scan.bytes, lines: scan.lines, head: scan.head, damaged: scan.problems.length > 0 };
  }

  async first(file: string): Promise<JournalRecord | undefined> {
    const table = journalTable(file);
    if (!this.has(table)) return undefined;
    const [row] = await this.sql.unsafe<{ body: string }[]>(`select body from ${this.store.ident(table)} order by line limit 1`);
    const decoded = row === undefined ? undefined : decodeRecord(row.body, VERIFY_ALL);
    return decoded?.ok ? decoded.record : undefined;
  }

  /**
   * The journal's rows of `key` (its `key` column's index), each verified by its own hash and of that key, in line
   * order; undefined (the caller reads the journal whole, and tells what it finds) when one is not, or, unless
   * `trusted` (no one but crux wrote the rows: pg-trust.ts), when they do not run without a gap from the first
   * sequence number to the last (a row deleted; a count of every row: a journal without derived rows, a test's).
   */
  async keyRecords(spec: StoreSpec<unknown>, key: string, opts: { trusted: boolean }): Promise<{ record: JournalRecord; at: LinePosition }[] | undefined> {
    const table = journalTable(spec.file);
    if (!this.has(table) || spec.keyOf === undefined) return undefined;
    const t = this.store.ident(table);
    if (!opts.trusted) {
      const [span] = await this.sql.unsafe<{ n: string; lo: string | null; hi: string | null }[]>(
        `select count(*) as n, min(seq) as lo, max(seq) as hi from ${t}`,
      );
      if (span === undefined || span.lo === null || Number(span.hi) - Number(span.lo) + 1 !== Number(span.n)) return undefined;
    }
    const rows = await this.sql.unsafe<{ line: string; body: string }[]>(`select line, body from ${t} where key = $1 order by line`, [key]);
    const found: { record: JournalRecord; at: LinePosition }[] = [];
    for (const { line, body } of rows) {
      const record = rowRecord(body, spec.vocabulary);
      if (record === undefined || spec.keyOf(record) !== key) return undefined;
      found.push({ record, at: rowPosition(Number(line), body) });
    }
    return found;
  }

  async historyHead(file: string): Promise<number | undefined> {
    if (!this.has('history')) return undefined;
    const [row] = await this.sql.unsafe<{ head: string | null }[]>(`select max(seq) as head from ${this.store.ident('history')} where journal = $1`, [file]);
    return row?.head == null ? undefined : Number(row.head);
  }

  async bytes(file: string, range?: { offset: number; length: number }): Promise<Buffer> {
    const table = journalTable(file);
    const rows = this.has(table) ? await this.sql.unsafe<{ body: string }[]>(`select body from ${this.store.ident(table)} order by line`) : [];
    const all = Buffer.from(rows.map((r) => `${r.body}\n`).join(''));
    return range === undefined ? all : all.subarray(range.offset, range.offset + range.length);
  }

  async quarantine(file: string, label: string, bytes: Uint8Array | string, ts: string): Promise<string> {
    const name = `${file}.${label}`;
    await this.sql.unsafe(`insert into ${this.store.ident('quarantine')} (journal, at, name, bytes) values ($1, $2, $3, $4)`, [
      file,
      ts,
      name,
      Buffer.from(bytes),
    ]);
    return `${this.store.location} quarantine/${name}`;
  }

  async quarantined(file: string): Promise<number> {
    if (!this.has('quarantine')) return 0;
    const [row] = await this.sql.unsafe<{ n: string }[]>(`select count(*) as n from ${this.store.ident('quarantine')} where journal = $1`, [file]);
    return Number(row?.n ?? 0);
  }

  async quarantineItems(): Promise<QuarantineItem[]> {
    return this.has('quarantine') ? quarantineItems(this.store, this.sql) : [];
  }

  /** Everything staged is written in the locked transaction at once: it commits with it, or not at all. */
  async stage(): Promise<StagedRewrite> {
    return new PgRewriteSet(this.store, this.sql, this.catalog);
  }

  /** The old rows, chain intact, move to `history` as a new generation (without what `leaveOut` names), then the new rows go in. */
  async replace(spec: StoreSpec<unknown>, text: string, opts: { archive?: ArchivePlan; note: string }): Promise<number> {
    const archive = opts.archive;
    if (archive !== undefined) {
      const history = this.store.ident('history');
      const [from, to] = archive.leaveOut ? [archive.leaveOut.from, archive.leaveOut.to] : [0, -1];
      await this.sql.unsafe(
        `insert into ${history} (journal, generation, compacted_at, line, seq, body, key)
         select $1, (select coalesce(max(generation), 0) + 1 from ${history} where journal = $1), $2, line, seq, body, coalesce(key, '')
         from ${this.store.ident(journalTable(spec.file))} where seq not between $3 and $4`,
        [spec.file, archive.ts, from, to],
      );
    }
    return replaceRows(this.store, this.sql, spec, text);
  }

  /** The derived rows rebuilt (entity by entity: pg-rebuild.ts) and, after a compaction, the statistics row counted afresh. */
  async rewritten<S>(spec: StoreSpec<S>, state?: S): Promise<void> {
    await this.store.refreshIndex(this.sql, this.catalog, spec, 'all');
    if (state !== undefined) await countAfterRewrite(this.store, this.sql, this.catalog, spec as StoreSpec<unknown>, { wholeLive: spec.liveBytes?.(state) });
  }

  /** Past retention, or all of it (every journal's) with `drop`, as in a data directory. */
  async pruneHistory(ts: string, drop: boolean): Promise<void> {
    if (!this.has('history')) return;
    const history = this.store.ident('history');
    if (drop) {
      await this.sql.unsafe(`delete from ${history}`);
      return;
    }
    await this.sql.unsafe(`delete from ${history} where compacted_at < $1::timestamptz - make_interval(secs => $2)`, [ts, this.retention.keepMs / 1000]);
    await this.sql.unsafe(
      `delete from ${history} h using (
         select journal, generation, sum(sum(octet_length(body) + 1)) over (partition by journal order by generation desc) as kept
         from ${history} group by journal, generation) g
       where h.journal = g.journal and h.generation = g.generation and g.kept > $1`,
      [this.retention.maxBytes],
    );
  }

  damaged(file: string, doing: string): Error {
    return new CruxError(
      'journal_damaged',
      `${this.store.location} ${journalTable(file)} has damaged rows; ${doing} would drop them`,
      'run `crux journal check --repair` first: it keeps them in quarantine',
    );
  }

  async checkDerived<S>(spec: StoreSpec<S>, replay: { state: S; keys: ReadonlySet<string> }, repair: boolean): Promise<DerivedReport | undefined> {
    return checkDerivedRows(this.store, this.sql, this.catalog, spec, replay, repair);
  }

  /**
   * Nothing dead after all (the estimate was low): counted as all live, so that the next attempt waits until the
   * journal has doubled, and no write after this one folds it again for nothing.
   */
  async nothingDead(spec: StoreSpec<unknown>, folded: Folded<unknown>): Promise<void> {
    await countAfterRewrite(this.store, this.sql, this.catalog, spec, { known: { bytes: folded.bytes, live: folded.bytes } });
  }

  /** The compaction after a write runs only if the journal is still due under the lock: another host's write may have compacted it. */
  async stillDue(spec: StoreSpec<unknown>): Promise<boolean> {
    const { line, head } = await this.store.headOf(this.sql, this.catalog, spec.file);
    return stillDue(this.sql, this.store.ident, this.catalog, spec, { line, h: head.h });
  }
}
