// The PostgreSQL store's whole-journal rewrites and reads: compaction (and its history), history read, restore.
import { CruxError } from '../../shared/errors';
import { decodeOwn, decodeRecord, VERIFY_ALL } from '../codec/record';
import { compactionText, planCompaction } from '../core/policy';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { CompactReport, HistoryPiece, ProgressSink } from '../core/store-boundary';
import type { Sql } from './client';
import { replaceRows, type PgHost } from './pg-host';
import { RowVerifier } from './rows';
import { reindexByKey } from './pg-reindex';
import { recount, stillDue, writeStats } from './pg-autocompact';

import { historySink, type HistoryRetention } from '../dir/history';
import type { RecordSink } from '../codec/verify';
import { arrayLiteral, journalTable, type Catalog } from './schema';

/**
 * Rows restored per statement. Small on purpose: a statement's parameters (the rows as array literals, then as the
 * wire's bytes) outlive its await and are collected only by a full GC, so 5,000-row statements let the heap grow to
 * ~200 MB during a copy where 1,000-row ones keep the peak near 150 MB (measured at 100k sessions), no slower.
 */
const RESTORE_ROWS = 1000;

export async function compactJournals(
  store: PgHost,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  opts: { progress?: ProgressSink | undefined; dropHistory?: boolean | undefined; retention: HistoryRetention; auto?: boolean },
): Promise<CompactReport[]> {
  const progress = opts.progress;
  return store.locked(async (sql, catalog) => {
    const reports: CompactReport[] = [];
    for (const spec of specs) {
      const name = journalName(spec.file);
      // The compaction after a write (pg-autocompact.ts) runs only if the journal is still due under the lock:
      // another host's write may have compacted it since.
      if (opts.auto === true) {
        const { line, head } = await store.headOf(sql, catalog, spec.file);
        if (!(await stillDue(sql, (t) => store.ident(t), catalog, spec, { line, h: head.h }))) continue;
      }
      const folded = await store.fold(sql, catalog, spec, { quiet: true, ...(progress ? { progress } : {}) });
      const before = { records: folded.scan.records, bytes: folded.scan.bytes };
      if (folded.scan.lines === 0) {
        reports.push({ name, file: spec.file, before, after: before });
        continue;
      }
      if (folded.scan.problems.length > 0) {
        throw new CruxError(
          'journal_damaged',
          `${store.location} ${journalTable(spec.file)} has damaged rows; compaction would drop them`,
          'run `crux journal check --repair` first: it keeps them in quarantine',
        );
      }
      const live = spec.live(folded.state);
      const table = store.ident(journalTable(spec.file));
      const [first] = await sql.unsafe<{ body: string }[]>(`select body from ${table} order by line limit 1`);
      const [kept] = catalog.tables.has('history')
        ? await sql.unsafe<{ head: string | null }[]>(`select max(seq) as head from ${store.ident('history')} where journal = $1`, [spec.file])
        : [];
      const firstRecord = first === undefined ? undefined : decodeOwn(first.body);
      const plan = planCompaction(
        { records: folded.scan.records, first: firstRecord, tornTail: false },
        live.length,
        kept?.head == null ? undefined : Number(kept.head),
      );
      if (!plan.rewrite) {
        // Nothing dead after all (the estimate was low): counted as all live, so that the next attempt waits until
        // the journal has doubled, and no write after this one folds it again for nothing.
        if (opts.auto === true) {
          const { line, head } = await store.headOf(sql, catalog, spec.file);
          await writeStats(sql, (t) => store.ident(t), spec.file, { line, h: head.h, bytes: folded.scan.bytes, live: folded.scan.bytes });
        }
        reports.push({ name, file: spec.file, before, after: before });
        continue;
      }
      const text = compactionText(folded.scan.head, before, live, ts);
      // What compaction drops is kept: the old rows, chain intact, move to `history`, without the restatements
      // of what history already holds (policy.ts).
      const [from, to] = plan.leaveOut ? [plan.leaveOut.from, plan.leaveOut.to] : [0, -1];
      await sql.unsafe(
        `insert into ${store.ident('history')} (journal, generation, compacted_at, line, seq, body)
         select $1, (select coalesce(max(generation), 0) + 1 from ${store.ident('history')} where journal = $1), $2, line, seq, body
         from ${table} where seq not between $3 and $4`,
        [spec.file, ts, from, to],
      );
      const bytes = await replaceRows(store, sql, spec, text);
      await store.refreshIndex(sql, catalog, spec, 'all', { whole: folded.state });
      await countAfterRewrite(store, sql, catalog, spec, spec.liveBytes?.(folded.state));
      reports.push({ name, file: spec.file, before, after: { records: live.length + 1, bytes } });
    }
    // Past retention, or all of it with --drop-history (this compaction's rows too), as in a data directory.
    if (catalog.tables.has('history')) await pruneHistory(store, sql, ts, opts.dropHistory === true ? undefined : opts.retention);
    return reports;
  });
}

/**
 * The statistics row of a journal just rewritten (compaction, restore), counted afresh and bound to its new head, so
 * that the next write need not count it: a journal without entities takes `wholeLive` (its state's estimate),
 * unknown after a restore (then the whole journal: nothing is due until a write that loads it says otherwise).
 */
async function countAfterRewrite(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<unknown>, wholeLive: number | undefined): Promise<void> {
  if (!catalog.tables.has('journal_stats')) return;
  const ident = (t: string) => store.ident(t);
  const counted = await recount(sql, ident, spec);
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  const live = spec.keyOf !== undefined ? counted.live : (wholeLive ?? counted.bytes);
  await writeStats(sql, ident, spec.file, { line, h: line === 0 ? '' : head.h, bytes: counted.bytes, live });
}

/**
 * Deletes the history rows past retention (older than keepMs, or beyond maxBytes counting from the newest
 * compaction), or all of them without a retention (`compact --drop-history`).
 */
async function pruneHistory(store: PgHost, sql: Sql, ts: string, retention: HistoryRetention | undefined): Promise<void> {
  const history = store.ident('history');
  if (retention === undefined) {
    await sql.unsafe(`delete from ${history}`);
    return;
  }
  await sql.unsafe(`delete from ${history} where compacted_at < $1::timestamptz - make_interval(secs => $2)`, [ts, retention.keepMs / 1000]);
  await sql.unsafe(
    `delete from ${history} h using (
       select journal, generation, sum(sum(octet_length(body) + 1)) over (partition by journal order by generation desc) as kept
       from ${history} group by journal, generation) g
     where h.journal = g.journal and h.generation = g.generation and g.kept > $1`,
    [retention.maxBytes],
  );
}

/** Every record journal `spec` ever kept, history first (see JournalStore.readHistory). */
export async function readHistoryRows<S>(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<S>, sink: RecordSink): Promise<void> {
  const visit = historySink(sink);
  const table = journalTable(spec.file);
  const sources: [string, unknown[], boolean][] = [];
  if (catalog.tables.has('history'))
    sources.push([`select line, body from ${store.ident('history')} where journal = $1 order by generation, line`, [spec.file], true]);
  if (catalog.tables.has(table)) sources.push([`select line, body from ${store.ident(table)} order by line`, [], false]);
  for (const [query, params, history] of sources) {
    // Each compaction's rows, and the journal, are chains of their own: verified one by one, as history files are.
    let verifier: RowVerifier | undefined;
    let previous = 0;
    await sql
      .unsafe(query, params as never[])
      .values()
      .cursor(5000, (rows) => {
        for (const [line, body] of rows as [string, string][]) {
          const n = Number(line);
          if (verifier === undefined || n <= previous) {
            if (verifier !== undefined) reportSkipped(store, spec.file, verifier);
            verifier = new RowVerifier(spec.vocabulary, visit, undefined, history);
          }
          previous = n;
          verifier.visit({ line: n, body });
        }
      });
    if (verifier !== undefined) reportSkipped(store, spec.file, verifier);
  }
}

function reportSkipped(store: PgHost, file: string, verifier: RowVerifier): void {
  for (const p of verifier.finish().problems) if (p.skipped) store.warn(`${store.location} ${journalTable(file)}:${p.line}: ${p.reason}`);
}

/** Stores `lines` as journal `file` of an empty store, byte for byte, in one transaction. */
/** A line of a source journal as a row's body: a record that verifies, byte for byte (a row never holds a fragment). */
function rowBody(bytes: Uint8Array, n: number, where: string): string {
  const body = Buffer.from(bytes).toString('utf8');
  if (!Buffer.from(body).equals(Buffer.from(bytes)) || !decodeRecord(body, VERIFY_ALL).ok) {
    throw new CruxError('journal_damaged', `line ${n} of ${where} is not a record that verifies`, 'run `crux journal check --repair` on the source first');
  }
  return body;
}

/**
 * Stores `lines` as journal `file` of an empty store, byte for byte, and `history` as its history rows, in one
 * transaction; the lines stream in (RESTORE_ROWS at a time), so memory stays flat in the journal's size.
 */
export async function restoreJournal(
  store: PgHost,
  spec: StoreSpec<unknown>,
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  history: readonly HistoryPiece[] = [],
): Promise<void> {
  await store.locked(async (sql, catalog) => {
    const table = journalTable(spec.file);
    if (catalog.tables.has(table)) {
      const [row] = await sql.unsafe(`select 1 from ${store.ident(table)} limit 1`);
      if (row !== undefined) throw new CruxError('conflict', `${store.location} ${table} already has records`, 'copy into an empty store');
    }
    let current: Catalog | undefined;
    let chunk: string[] = [];
    let n = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      current ??= await store.prepare(sql, catalog, spec.file);
      await store.insertLines(sql, spec, chunk, n - chunk.length);
      chunk = [];
    };
    for await (const bytes of lines) {
      n += 1;
      chunk.push(rowBody(bytes, n, spec.file));
      if (chunk.length >= RESTORE_ROWS) await flush();
    }
    await flush();
    if (current === undefined) return;
    await restoreHistory(store, sql, spec, history);
    // Entity by entity: a whole fold here would hold every entity of the journal (journal copy's memory).
    await reindexByKey(store, sql, current, spec);
    await countAfterRewrite(store, sql, current, spec, undefined);
  });
}

/**
 * History pieces as generations 1, 2, … of the history table, streamed in (RESTORE_ROWS at a time), each dated by its
 * newest record (as retention reads a file).
 */
async function restoreHistory(store: PgHost, sql: Sql, spec: StoreSpec<unknown>, pieces: readonly HistoryPiece[]): Promise<void> {
  const history = store.ident('history');
  for (const [g, piece] of pieces.entries()) {
    let newest = new Date(0).toISOString();
    let bodies: string[] = [];
    let seqs: number[] = [];
    let n = 0;
    const flush = async () => {
      if (bodies.length === 0) return;
      await sql.unsafe(
        `insert into ${history} (journal, generation, compacted_at, line, seq, body)
         select $1, $2, $3, * from unnest($4::bigint[], $5::bigint[], $6::text[])`,
        [spec.file, g + 1, newest, arrayLiteral(bodies.map((_, k) => n - bodies.length + k + 1)), arrayLiteral(seqs), arrayLiteral(bodies)],
      );
      bodies = [];
      seqs = [];
    };
    for await (const bytes of piece.lines) {
      n += 1;
      const body = rowBody(bytes, n, piece.name);
      const record = decodeOwn(body);
      if (record.ts > newest) newest = record.ts;
      bodies.push(body);
      seqs.push(record.seq);
      if (bodies.length >= RESTORE_ROWS) await flush();
    }
    await flush();
    // The generation's date is its newest record's, known once every row is in.
    await sql.unsafe(`update ${history} set compacted_at = $3 where journal = $1 and generation = $2`, [spec.file, g + 1, newest]);
  }
}

/**
 * Journal `file`'s history rows as pieces, oldest first, each named as its history/ file would be (by its last
 * seq), each piece's rows read through a cursor as it is iterated (inside the caller's transaction).
 */
export async function historyPieces(store: PgHost, sql: Sql, catalog: Catalog, file: string): Promise<HistoryPiece[]> {
  if (!catalog.tables.has('history')) return [];
  const history = store.ident('history');
  const generations = await sql.unsafe<{ generation: number; last: string }[]>(
    `select generation, (array_agg(seq order by line desc))[1] as last from ${history} where journal = $1 group by generation order by generation`,
    [file],
  );
  return generations.map(({ generation, last }) => ({
    name: `${file.replace(/\.jsonl$/, '')}.${String(last).padStart(12, '0')}.jsonl`,
    lines: (async function* () {
      for await (const rows of sql
        .unsafe(`select body from ${history} where journal = $1 and generation = $2 order by line`, [file, generation])
        .values()
        .cursor(5000)) {
        for (const [body] of rows as [string][]) yield Buffer.from(body);
      }
    })(),
  }));
}
