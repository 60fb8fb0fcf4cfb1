// The PostgreSQL store's whole-journal rewrites and reads: compaction (and its history), history read, restore.
import { CruxError } from '../../shared/errors';
import { decodeRecord, VERIFY_ALL } from '../record';
import { compactionText } from '../policy';
import { journalName, type StoreSpec } from '../store-spec';
import type { CompactReport, ProgressSink } from '../store-boundary';
import type { Sql } from './client';
import { replaceRows, type PgHost } from './pg-host';
import { RowVerifier } from './rows';
import { historySink, type HistoryRetention } from '../history';
import type { RecordSink } from '../verify';
import { journalTable, type Catalog } from './schema';


export async function compactJournals(
  store: PgHost,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  opts: { progress?: ProgressSink | undefined; dropHistory?: boolean | undefined; retention: HistoryRetention },
): Promise<CompactReport[]> {
  const progress = opts.progress;
  return store.locked(async (sql, catalog) => {
    const reports: CompactReport[] = [];
    for (const spec of specs) {
      const name = journalName(spec.file);
      const folded = await store.fold(sql, catalog, spec, { quiet: true, ...(progress ? { progress } : {}) });
      const before = { records: folded.scan.records, bytes: folded.scan.bytes };
      if (folded.scan.lines === 0) {
        reports.push({ name, file: spec.file, before, after: before });
        continue;
      }
      if (folded.scan.problems.length > 0) {
        throw new CruxError('journal_damaged', `${store.location} ${journalTable(spec.file)} has damaged rows; compaction would drop them`, 'run `crux journal check --repair` first: it keeps them in quarantine');
      }
      const live = spec.live(folded.state);
      const text = compactionText(folded.scan.head, before, live, ts);
      // What compaction drops is kept: the old rows, chain intact, move to `history`.
      await sql.unsafe(
        `insert into ${store.ident('history')} (journal, generation, compacted_at, line, seq, body)
         select $1, (select coalesce(max(generation), 0) + 1 from ${store.ident('history')} where journal = $1), $2, line, seq, body
         from ${store.ident(journalTable(spec.file))}`,
        [spec.file, ts],
      );
      const bytes = await replaceRows(store, sql, spec, text);
      await store.refreshIndex(sql, catalog, spec, 'all', { whole: folded.state });
      reports.push({ name, file: spec.file, before, after: { records: live.length + 1, bytes } });
    }
    // Past retention, or all of it with --drop-history (this compaction's rows too), as in a data directory.
    if (catalog.tables.has('history')) await pruneHistory(store, sql, ts, opts.dropHistory === true ? undefined : opts.retention);
    return reports;
  });
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
  const sources: [string, unknown[]][] = [];
  if (catalog.tables.has('history')) sources.push([`select line, body from ${store.ident('history')} where journal = $1 order by generation, line`, [spec.file]]);
  if (catalog.tables.has(table)) sources.push([`select line, body from ${store.ident(table)} order by line`, []]);
  for (const [query, params] of sources) {
    // Each compaction's rows, and the journal, are chains of their own: verified one by one, as history files are.
    let verifier: RowVerifier | undefined;
    let previous = 0;
    await sql.unsafe(query, params as never[]).values().cursor(5000, (rows) => {
      for (const [line, body] of rows as [string, string][]) {
        const n = Number(line);
        if (verifier === undefined || n <= previous) {
          if (verifier !== undefined) reportSkipped(store, spec.file, verifier);
          verifier = new RowVerifier(spec.vocabulary, visit);
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
export async function restoreJournal(
  store: PgHost,
  spec: StoreSpec<unknown>,
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<void> {
  const bodies: string[] = [];
  let n = 0;
  for await (const bytes of lines) {
    n += 1;
    const body = Buffer.from(bytes).toString('utf8');
    // A table row holds a record, never a fragment: the source must verify line by line.
    if (!Buffer.from(body).equals(Buffer.from(bytes)) || !decodeRecord(body, VERIFY_ALL).ok) {
      throw new CruxError('journal_damaged', `line ${n} of ${spec.file} is not a record that verifies`, 'run `crux journal check --repair` on the source first');
    }
    bodies.push(body);
  }
  if (bodies.length === 0) return;
  await store.locked(async (sql, catalog) => {
    const table = journalTable(spec.file);
    if (catalog.tables.has(table)) {
      const [row] = await sql.unsafe(`select 1 from ${store.ident(table)} limit 1`);
      if (row !== undefined) throw new CruxError('conflict', `${store.location} ${table} already has records`, 'copy into an empty store');
    }
    const current = await store.prepare(sql, catalog, spec.file);
    await store.insertLines(sql, spec, bodies, 0);
    await store.refreshIndex(sql, current, spec, 'all');
  });
}
