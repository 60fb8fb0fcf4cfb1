// Reading a journal's rows into a state on PostgreSQL: the whole journal (from its snapshot row when one is
// valid), or only some entities' rows through the database's index by key; every row verified as it is applied.
import { decodeRecord, EMPTY_HEAD, VERIFY_ALL, type ChainHead } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import { reportDamage } from '../codec/reporting';
import type { ProgressSink, Reporter } from '../core/store-boundary';
import type { Sql } from './client';
import { PgConnection } from './pg-connection';
import { arrayLiteral, journalTable, type Catalog } from './schema';
import { rowPosition, RowVerifier, visitRows, type RowScan } from './rows';
import { loadPgSnapshot, savePgSnapshot, SNAPSHOT_AFTER_ROWS } from './pg-snapshot';
import type { StoreUrl } from './url';

/** Rows fetched per round trip when a whole journal is read. */
export const FETCH_ROWS = 5000;

export interface Folded<S> {
  state: S;
  scan: RowScan;
  ms: number;
}

export class PgReads extends PgConnection {
  constructor(
    url: StoreUrl,
    lockTimeoutMs: number,
    protected readonly reporter: Reporter,
  ) {
    super(url, lockTimeoutMs, (message) => reporter.warn(message));
  }

  /**
   * The whole state for a query or a transaction's load: from the snapshot row and the rows after it when there
   * is a valid one, else a fold of every row. A reader that folded many rows keeps a new snapshot.
   */
  async foldWhole<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<Folded<S> & { line: number }> {
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
    await visitRows(q, `select line, body from ${this.ident(journalTable(spec.file))} where line > $1 order by line`, [snapshot.line], verifier);
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

  /** Folds a whole journal, verifying every row; problems go to the reporter unless quiet. */
  async fold<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink } = {}): Promise<Folded<S>> {
    const started = performance.now();
    const state = spec.initial();
    const verifier = new RowVerifier(spec.vocabulary, (record, at) => spec.evolve(state, record, at));
    const table = journalTable(spec.file);
    if (catalog.tables.has(table)) {
      const total = opts.progress === undefined ? 0 : await this.count(q, table);
      await visitRows(q, `select line, body from ${this.ident(table)} order by line`, [], verifier, () => opts.progress?.(spec.file, verifier.visited, total));
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
  async foldKeys<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, keys: readonly string[], opts: { quiet?: boolean } = {}): Promise<Folded<S>> {
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
          problems.push({ line: Number(line), reason: decoded.reason, skipped: true, length: Buffer.byteLength(body) });
          continue;
        }
        if (!spec.vocabulary.has(decoded.record.ev)) continue;
        records += 1;
        spec.evolve(state, decoded.record, rowPosition(Number(line), body));
      }
    }
    const scan: RowScan = { records, lines: records, bytes: 0, problems, head: { seq: 0, h: '' }, lastLine: 0 };
    if (!opts.quiet) this.report(spec.file, scan);
    return { state, scan, ms: performance.now() - started };
  }

  /** The last row of a journal: the chain head a new batch continues, and its line. */
  async headOf(q: Sql, catalog: Catalog, file: string): Promise<{ head: ChainHead; line: number }> {
    const table = journalTable(file);
    if (!catalog.tables.has(table)) return { head: EMPTY_HEAD, line: 0 };
    const [row] = await q.unsafe<{ line: string; seq: string; h: string }[]>(`select line, seq, h from ${this.ident(table)} order by line desc limit 1`);
    return row === undefined ? { head: EMPTY_HEAD, line: 0 } : { head: { seq: Number(row.seq), h: row.h }, line: Number(row.line) };
  }

  private async count(q: Sql, table: string): Promise<number> {
    const [row] = await q.unsafe<{ n: string }[]>(`select count(*) as n from ${this.ident(table)}`);
    return Number(row?.n ?? 0);
  }

  /** Tells the problems of a read (on stderr and in `warnings`, each once a command). */
  protected report(file: string, scan: RowScan): void {
    // A whole read's head (a read of some keys has none): compared with another primary after a switch (pg-seen.ts).
    this.noteHead(file, scan.head);
    for (const problem of scan.problems) {
      reportDamage(
        this.reporter,
        { file, line: problem.line, reason: problem.reason },
        `${this.location} ${journalTable(file)}:${problem.line}: ${problem.reason} (run \`crux journal check\`)`,
      );
    }
  }
}
