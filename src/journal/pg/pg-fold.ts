// Reading a journal's rows into a state on PostgreSQL: the whole journal (from its snapshot row when one is
// valid), or only some entities' rows through the database's index by key; every row verified as a file's line is,
// through the same ChainVerifier (codec/verify.ts): its own hash, its place in the chain and the sequence, the
// vocabulary, batches. Never throws on bad data.
// (Over 300 lines: the whole fold and the fold by key share the row scan, and the snapshot row — loaded, claimed,
// saved — is where a whole fold starts and what it keeps: one piece.)
//
// The snapshot row (StoreSpec.snapshot): a whole-store state cached in the database, so that `case retrieve` over
// 100k cases decodes one row and folds the records after it, instead of folding every row. Derived data, and so
// verified before it is trusted: it names the row it was taken at (line, seq, hash), and carries the SHA-256 of its
// bytes; a snapshot whose row is not in the journal as named (the journal was compacted or repaired since), whose
// bytes do not hash to its digest (an edited or damaged row), or of another codec version, is ignored; so is every
// snapshot of a journal without its guard (pg-trust.ts), whose trigger deletes the snapshot when anything but crux
// writes a row. A reader saves one only over the row as it found it before it read the journal (a claim row made
// then, when there was none): an edit meanwhile deleted that row, and nothing of the rows it read is saved.
import { decodeRecord, EMPTY_HEAD, VERIFY_ALL, type ChainHead, type JournalRecord } from '../codec/record';
import type { StoreSpec, Vocabulary } from '../codec/store-spec';
import { reportDamage } from '../codec/reporting';
import { ChainVerifier, SNAPSHOT_EVENT, type LinePosition, type RecordSink } from '../codec/verify';
import type { LinesProblem, LinesScan } from '../core/line-store';
import type { ProgressSink, Reporter } from '../core/store-boundary';
import type { Sql } from './client';
import { PgConnection } from './pg-connection';
import type { PgLink } from './pg-link';
import { eachPage } from './pg-pages';
import { arrayLiteral, journalTable, type Catalog } from './schema';
import { pauseForTest } from '../../shared/crash-point';
import type { StoreUrl } from './url';

/** A snapshot is written by a reader that folded at least this many rows past it (or the whole journal). */
const SNAPSHOT_AFTER_ROWS = 2000;

/**
 * The rows (as `r`) of the entities $1 (a text[], as `k`) from each one's last resetting record on: what an entity's
 * state holds, read through the journal table's index by key.
 */
export const keyRows = (t: string): string => `unnest($1::text[]) as k(key)
  cross join lateral (select coalesce(max(line), 0) as since from ${t} where key = k.key and resets) s
  join ${t} r on r.key = k.key and r.line >= s.since`;

/** Where a row is, in the terms the journal layer uses for a line (rows have no byte offsets: the offset is the line). */
export const rowPosition = (line: number, body: string): LinePosition => ({ line, offset: line, length: Buffer.byteLength(body) });

/**
 * A row's record when the row verifies on its own, as a line of the journal does: its own hash, an event of
 * `vocabulary` whose payload it accepts (or, with `snapshot`, the opening snapshot); else undefined.
 */
export function rowRecord(body: string, vocabulary: Vocabulary, opts: { snapshot?: boolean } = {}): JournalRecord | undefined {
  const decoded = decodeRecord(body, VERIFY_ALL);
  if (!decoded.ok) return undefined;
  const record = decoded.record;
  if (opts.snapshot === true && record.ev === SNAPSHOT_EVENT) return record;
  return vocabulary.has(record.ev) && vocabulary.payloadProblem?.(record) === undefined ? record : undefined;
}

/** A verified pass over rows, and the line of the last row visited (verified or not): the next row goes after it. */
export interface RowScan extends Omit<LinesScan, 'exists' | 'tornTail'> {
  readonly lastLine: number;
}

/**
 * Verifies the rows `query` selects (line, body; undefined: none), in line order, a page at a time (eachPage),
 * handing each record that verifies to `sink` once its batch is whole (no sink: nothing is held, however large a
 * batch). `see`: each record that verifies as it is read, before its batch is whole. `from`: the head before the
 * first row, when the rows before it are known (a snapshot's tail). `history`: history rows (a snapshot's
 * restatements may be left out, verify.ts). `progress`: rows visited, after each page. A batch still open at the
 * end cannot be a write in progress (a transaction commits all of its rows or none): it is damage, reported at its
 * first row.
 */
export async function scanRows(
  q: Sql,
  query: string | undefined,
  params: unknown[],
  vocabulary: ReadonlySet<string>,
  sink: RecordSink | undefined,
  opts: {
    from?: ChainHead | undefined;
    history?: boolean | undefined;
    progress?: ((visited: number) => void) | undefined;
    see?: ((record: JournalRecord, at: LinePosition) => void) | undefined;
    inTransaction: boolean;
  },
): Promise<RowScan> {
  const see = opts.see;
  // Without a sink a batch's records are not kept (only counted): the verifier holds a 0 for each (not undefined,
  // which it takes for a line that does not fold).
  const chain =
    sink === undefined
      ? new ChainVerifier<0>(
          vocabulary,
          () => {},
          opts.from,
          opts.history ?? false,
          (record, at) => (see?.(record, at), 0),
        )
      : new ChainVerifier<JournalRecord>(vocabulary, sink, opts.from, opts.history ?? false, (record, at) => (see?.(record, at), record));
  let [lines, bytes, lastLine] = [0, 0, 0];
  if (query !== undefined)
    await eachPage(q, query, params, opts.inTransaction, (rows) => {
      for (const [line, body] of rows as [string, string][]) {
        const at = rowPosition(Number(line), body);
        [lines, bytes, lastLine] = [lines + 1, bytes + at.length + 1, at.line];
        chain.visit(body, at);
      }
      opts.progress?.(lines);
    });
  const verified = chain.finish();
  const problems = verified.problems.map(({ line, reason, skipped, length }) => ({ line, reason, skipped, length }));
  if (verified.open !== undefined) {
    const { at, seen, want } = verified.open;
    problems.push({ line: at.line, reason: `incomplete batch (${seen} of ${want} records)`, skipped: true, length: at.length });
  }
  return { records: verified.records, lines, bytes, lastLine, problems, head: verified.head };
}

/** A journal's snapshot row as a state (loadPgSnapshot). */
export interface PgSnapshot<S> {
  readonly state: S;
  readonly line: number;
  readonly head: ChainHead;
}

/** Folds the rows after `snapshot` into its state (in place), verified from the head it names. */
export function foldSnapshotTail<S>(
  q: Sql,
  ident: (t: string) => string,
  spec: StoreSpec<S>,
  snapshot: PgSnapshot<S>,
  inTransaction: boolean,
): Promise<RowScan> {
  const select = `select line, body from ${ident(journalTable(spec.file))} where line > $1 order by line`;
  const evolve = (record: JournalRecord, at: LinePosition) => spec.evolve(snapshot.state, record, at);
  return scanRows(q, select, [snapshot.line], spec.vocabulary, evolve, { from: snapshot.head, inTransaction });
}

/**
 * The journal's snapshot as a state, when there is one that this codec reads and that names a row as it is, and the
 * journal's table is guarded (pg-trust.ts: a row edited by hand before the one the snapshot names deleted it; a
 * journal without its guard may have been). `journal check` compares a snapshot with its replay whatever the guard
 * (`unguarded`).
 */
export async function loadPgSnapshot<S>(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<S>,
  opts: { unguarded?: boolean } = {},
): Promise<PgSnapshot<S> | undefined> {
  return (await readSnapshotRow(q, ident, catalog, spec, opts))?.snapshot;
}

/**
 * The journal's snapshot row as loadPgSnapshot reads it, with what a reader that may save a snapshot needs: the row's
 * version (`xmin`, whatever the row holds: a snapshot, valid or not, or a reader's claim) and the journal's last line.
 * Undefined when the journal has no snapshot (no codec, no table, no guard).
 */
async function readSnapshotRow<S>(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<S>,
  opts: { unguarded?: boolean } = {},
): Promise<{ snapshot: PgSnapshot<S> | undefined; version: string | undefined; last: number } | undefined> {
  const codec = spec.snapshot;
  const journal = journalTable(spec.file);
  if (codec === undefined || !catalog.tables.has('snapshots') || !catalog.tables.has(journal)) return undefined;
  if (opts.unguarded !== true && !catalog.guarded.has(journal)) return undefined;
  // One row whatever there is. The bytes as base64 text: the client parses bytea's hex form at about half that speed
  // (12 MB: 400 ms against 250 ms).
  const [row] = await q.unsafe<{ version: string | null; line: string; seq: string; h: string; digest: string; b64: string | null; last: string | null }[]>(
    `select s.xmin::text as version, s.line, s.seq, s.h, s.digest, case when j.line is not null then encode(s.bytes, 'base64') end as b64,
       (select max(line) from ${ident(journal)}) as last
     from (select 1) one left join ${ident('snapshots')} s on s.journal = $1
       left join ${ident(journal)} j on s.codec = $2 and j.line = s.line and j.seq = s.seq and j.h = s.h`,
    [spec.file, codec.version],
  );
  const version = row?.version ?? undefined;
  const last = Number(row?.last ?? 0);
  if (row?.b64 == null) return { snapshot: undefined, version, last };
  const bytes = Buffer.from(row.b64, 'base64');
  if (digestOf(bytes) !== row.digest) return { snapshot: undefined, version, last };
  const state = codec.decode({ length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) });
  return { snapshot: state === undefined ? undefined : { state, line: Number(row.line), head: { seq: Number(row.seq), h: row.h } }, version, last };
}

/**
 * A reader's claim on a journal's snapshot row, made before it reads the rows it may keep a snapshot of: a row
 * (codec 0, line -1: no snapshot, never loaded) for the journal's trigger to delete should anything but crux write the
 * journal meanwhile. Its version, or undefined when a row is there already or the reader may not write (the save is
 * then not made).
 */
async function claimSnapshot(sql: Sql, ident: (t: string) => string, file: string): Promise<string | undefined> {
  const rows = await sql
    .unsafe<{ version: string }[]>(
      `insert into ${ident('snapshots')} (journal, codec, line, seq, h, digest, bytes) values ($1, 0, -1, 0, '', '', '')
       on conflict (journal) do nothing returning xmin::text as version`,
      [file],
    )
    .catch(() => []);
  return rows[0]?.version;
}

const digestOf = (bytes: Uint8Array): string => (require('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(bytes).digest('hex');

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
    link?: PgLink,
  ) {
    super(url, lockTimeoutMs, (message) => reporter.warn(message), link);
  }

  /**
   * The whole state for a query or a transaction's load: from the snapshot row and the rows after it when there
   * is a valid one, else a fold of every row. A reader that folded many rows keeps a new snapshot (keepSnapshot).
   */
  async foldWhole<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>): Promise<Folded<S> & { line: number }> {
    const found = await readSnapshotRow(q, this.ident, catalog, spec);
    const snapshot = found?.snapshot;
    // A reader (outside any transaction) that will fold enough rows to keep a snapshot makes sure, before it reads
    // them, that there is a row for the journal's trigger to delete: its version is the one the save expects.
    let version = found?.version;
    const keeps = found !== undefined && spec.snapshot !== undefined && this.active === undefined;
    if (keeps && version === undefined && found.last - (snapshot?.line ?? 0) >= SNAPSHOT_AFTER_ROWS) {
      version = await claimSnapshot(this.sql, this.ident, spec.file);
    }
    const started = performance.now();
    if (snapshot === undefined) {
      const folded = await this.fold(q, catalog, spec);
      if (keeps) await this.keepSnapshot(spec, folded.state, folded.scan, version);
      return { ...folded, line: folded.scan.lastLine };
    }
    const tail = await foldSnapshotTail(q, this.ident, spec, snapshot, this.inTransaction(q));
    this.report(spec.file, tail);
    if (keeps) await this.keepSnapshot(spec, snapshot.state, tail, version);
    return { state: snapshot.state, scan: tail, ms: performance.now() - started, line: tail.lines > 0 ? tail.lastLine : snapshot.line };
  }

  /**
   * A reader that folded many rows (SNAPSHOT_AFTER_ROWS, without damage) keeps a snapshot of `state`, which holds the
   * journal up to the last row `scan` visited: outside any transaction, a write of its own; when it cannot be written
   * (a reader may lack the right), the answer stands. Only over the row as the reader found it before it read the
   * journal (`version`, readSnapshotRow or claimSnapshot): a row edited by hand meanwhile made the journal's trigger
   * delete that row, and the rows folded may be those before the edit, so nothing is saved, and no snapshot of them
   * outlives the trigger's deletion.
   */
  private async keepSnapshot<S>(spec: StoreSpec<S>, state: S, scan: RowScan, version: string | undefined): Promise<void> {
    const codec = spec.snapshot;
    if (codec === undefined || version === undefined || scan.lines < SNAPSHOT_AFTER_ROWS || scan.problems.length > 0) return;
    const bytes = Buffer.from(codec.encode(state));
    await pauseForTest('CRUX_TEST_SNAPSHOT_PAUSE');
    await this.sql
      .unsafe(
        `update ${this.ident('snapshots')} set codec = $2, line = $3, seq = $4, h = $5, digest = $6, bytes = $7 where journal = $1 and xmin = $8::text::xid`,
        [spec.file, codec.version, scan.lastLine, scan.head.seq, scan.head.h, digestOf(bytes), bytes, version],
      )
      .catch(() => {});
  }

  /** Folds a whole journal, verifying every row; problems go to the reporter unless quiet. */
  async fold<S>(q: Sql, catalog: Catalog, spec: StoreSpec<S>, opts: { quiet?: boolean; progress?: ProgressSink } = {}): Promise<Folded<S>> {
    const started = performance.now();
    const state = spec.initial();
    const table = journalTable(spec.file);
    const total = opts.progress === undefined || !catalog.tables.has(table) ? 0 : await this.count(q, table);
    const progress = opts.progress === undefined ? undefined : (visited: number) => opts.progress?.(spec.file, visited, total);
    const evolve = (record: JournalRecord, at: LinePosition) => spec.evolve(state, record, at);
    const select = catalog.tables.has(table) ? `select line, body from ${this.ident(table)} order by line` : undefined;
    const scan = await scanRows(q, select, [], spec.vocabulary, evolve, { progress, inTransaction: this.inTransaction(q) });
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
    const problems: LinesProblem[] = [];
    let records = 0;
    if (catalog.tables.has(table)) {
      const t = this.ident(table);
      const rows = await q.unsafe<{ line: string; body: string }[]>(`select r.line, r.body from ${keyRows(t)} order by r.line`, [arrayLiteral(keys)]);
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

  /** Whether `q` is the transaction this connection runs (a paged read's cursor lives in it), not the bare connection. */
  protected inTransaction(q: Sql): boolean {
    return q === this.active;
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
    // A whole read's head (a read of some keys has none): compared with another primary after a switch (pg-seen-heads.ts).
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
