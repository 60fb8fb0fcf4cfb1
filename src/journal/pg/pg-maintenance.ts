// The PostgreSQL store's whole-journal operations: check (and repair), compact, doctor's survey, restore.
import { CruxError } from '../../shared/errors';
import { decodeRecord, VERIFY_ALL, type JournalRecord } from '../record';
import { BEFORE_REPAIR, ClockWatch, compactionDue, compactionText, rechain, REMOVED_LINES, removedLineRecord } from '../policy';
import { journalName, type StoreSpec } from '../store-spec';
import type { CompactReport, JournalFacts, JournalReport, ProgressSink, StoreFacts } from '../store-boundary';
import type { Sql } from './client';
import type { PgStore } from './pg-store';
import { RowVerifier, type RowScan } from './rows';
import { historySink, type HistoryRetention } from '../history';
import type { RecordSink } from '../verify';
import { journalFileOf, journalTable, readCatalog, SCHEMA_VERSION, type Catalog } from './schema';

/** Tables of the schema that are not journals. */
const OWN_TABLES = new Set(['schema_version', 'keys', 'history', 'quarantine', 'secondary_indexes', 'snapshots']);

async function quarantined(store: PgStore, sql: Sql, catalog: Catalog, file: string): Promise<number> {
  if (!catalog.tables.has('quarantine')) return 0;
  const [row] = await sql.unsafe<{ n: string }[]>(`select count(*) as n from ${store.ident('quarantine')} where journal = $1`, [file]);
  return Number(row?.n ?? 0);
}

/** What `journal check` and doctor report of one journal table's verified rows. */
async function reportRows(store: PgStore, sql: Sql, catalog: Catalog, file: string, table: string, scan: RowScan, started: number): Promise<JournalReport> {
  return {
    name: journalName(file),
    file,
    exists: catalog.tables.has(table),
    records: scan.records,
    bytes: scan.bytes,
    problems: scan.problems.map(({ line, reason }) => ({ line, reason })),
    torn_tail: false,
    quarantined: await quarantined(store, sql, catalog, file),
    replay_ms: Math.round((performance.now() - started) * 10) / 10,
  };
}

export async function checkJournals(
  store: PgStore,
  specs: readonly StoreSpec<unknown>[],
  opts: { repair: boolean; ts: string; progress?: ProgressSink },
): Promise<JournalReport[]> {
  return store.locked(async (sql, catalog) => {
    const reports: JournalReport[] = [];
    for (const spec of specs) {
      const kept: JournalRecord[] = [];
      const started = performance.now();
      const table = journalTable(spec.file);
      const verifier = new RowVerifier(spec.vocabulary, (record) => {
        if (opts.repair) kept.push(record);
      });
      const rows: { line: number; body: string }[] = [];
      if (catalog.tables.has(table)) {
        await sql.unsafe(`select line, body from ${store.ident(table)} order by line`).values().cursor(5000, (batch) => {
          for (const [line, body] of batch as [string, string][]) {
            const row = { line: Number(line), body };
            verifier.visit(row);
            if (opts.repair) rows.push(row);
          }
          opts.progress?.(spec.file, verifier.visited, 0);
        });
      }
      const scan = verifier.finish();
      const report: JournalReport = await reportRows(store, sql, catalog, spec.file, table, scan, started);
      if (!opts.repair || scan.problems.length === 0) {
        reports.push(report);
        continue;
      }
      // Repair: every row as it was and each removed row go to quarantine; the rest are re-chained in order.
      const skipped = new Set(scan.problems.filter((p) => p.skipped).map((p) => p.line));
      const stamp = opts.ts;
      const before = rows.map((r) => r.body).join('\n') + '\n';
      // Each row's offset is the one it has in the journal as a file (what `journal copy` writes).
      const removed: string[] = [];
      let offset = 0;
      for (const r of rows) {
        if (skipped.has(r.line)) removed.push(removedLineRecord(r.line, offset, scan.problems.find((p) => p.line === r.line)!.reason, Buffer.from(r.body)));
        offset += Buffer.byteLength(r.body) + 1;
      }
      const names = [`${spec.file}.${BEFORE_REPAIR}`];
      await sql.unsafe(`insert into ${store.ident('quarantine')} (journal, at, name, bytes) values ($1, $2, $3, $4)`, [spec.file, stamp, names[0]!, Buffer.from(before)]);
      if (removed.length > 0) {
        names.push(`${spec.file}.${REMOVED_LINES}`);
        await sql.unsafe(`insert into ${store.ident('quarantine')} (journal, at, name, bytes) values ($1, $2, $3, $4)`, [spec.file, stamp, names[1]!, Buffer.from(`${removed.join('\n')}\n`)]);
      }
      await replaceRows(store, sql, spec, rechain(kept, stamp));
      await store.refreshIndex(sql, catalog, spec, 'all');
      reports.push({ ...report, repaired: { removed: skipped.size, quarantine: names.map((n) => `${store.location} quarantine/${n}`) } });
    }
    return reports;
  });
}

/** Replaces every row of a journal with the lines of `text`. */
async function replaceRows(store: PgStore, sql: Sql, spec: StoreSpec<unknown>, text: string): Promise<number> {
  await sql.unsafe(`delete from ${store.ident(journalTable(spec.file))}`);
  const lines = text.split('\n').slice(0, -1);
  await store.insertLines(sql, spec, lines, 0);
  return Buffer.byteLength(text);
}

export async function compactJournals(
  store: PgStore,
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
      await store.refreshIndex(sql, catalog, spec, 'all', folded.state);
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
async function pruneHistory(store: PgStore, sql: Sql, ts: string, retention: HistoryRetention | undefined): Promise<void> {
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
export async function readHistoryRows<S>(store: PgStore, sql: Sql, catalog: Catalog, spec: StoreSpec<S>, sink: RecordSink): Promise<void> {
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

function reportSkipped(store: PgStore, file: string, verifier: RowVerifier): void {
  for (const p of verifier.finish().problems) if (p.skipped) store.warn(`${store.location} ${journalTable(file)}:${p.line}: ${p.reason}`);
}

/** Stores `lines` as journal `file` of an empty store, byte for byte, in one transaction. */
export async function restoreJournal(
  store: PgStore,
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

export async function surveyPg(store: PgStore, specs: readonly StoreSpec<unknown>[]): Promise<StoreFacts> {
  return store.transaction(async (sql) => {
      const [got] = await sql<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${0x63727578}, hashtext(${store.url.schema})) as ok`;
      const held = got?.ok !== true;
      const holder = held ? await lockHolder(sql, store.url.schema) : null;
      const [info] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
      const catalog = await readCatalog(sql, store.url.schema);
      const exists = catalog.tables.size > 0;
      const usable = exists && catalog.version <= SCHEMA_VERSION;
      const journals: JournalFacts<any>[] = [];
      if (usable) {
        for (const spec of specs) journals.push(await surveyJournal(store, sql, catalog, spec));
      }
      const quarantine = usable && catalog.tables.has('quarantine')
        ? (await sql.unsafe<{ name: string; at: Date }[]>(`select name, at from ${store.ident('quarantine')} order by at, name`)).map((r) => `${r.at.toISOString()} ${r.name}`)
        : [];
      const known = new Set(specs.map((s) => journalTable(s.file)));
      const other = [...catalog.tables].filter((t) => !OWN_TABLES.has(t) && !known.has(t) && !known.has(t.replace(/_index$/, ''))).sort();
      return {
        location: { path: store.location, exists, usable, mode: null },
        lock: {
          held,
          name: `pg_advisory_xact_lock(${0x63727578}, hashtext('${store.url.schema}'))`,
          holder,
          // The server frees a transaction's advisory lock when the transaction or its connection ends: never stale.
          stale: false,
          mechanism: 'advisory lock of a transaction, freed by the server when its holder goes',
        },
        journals,
        quarantine,
        other_files: other.map((t) => journalFileOf(t) ?? t),
        server: { version: info?.v ?? 'unknown', schema: store.url.schema, schema_version: catalog.version, crux_schema_version: SCHEMA_VERSION },
      };
  });
}

async function lockHolder(sql: Sql, schema: string): Promise<{ pid: number; command: string } | null> {
  const [row] = await sql<{ pid: number; app: string | null; addr: string | null }[]>`
    select a.pid, a.application_name as app, host(a.client_addr) as addr from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.classid = ${0x63727578}::oid and l.objid = hashtext(${schema})::oid limit 1`;
  return row === undefined ? null : { pid: row.pid, command: `${row.app || 'a client'} from ${row.addr ?? 'a local socket'} (server pid)` };
}

async function surveyJournal(store: PgStore, sql: Sql, catalog: Catalog, spec: StoreSpec<unknown>): Promise<JournalFacts<unknown>> {
  const started = performance.now();
  const state = spec.initial();
  const clock = new ClockWatch();
  const verifier = new RowVerifier(spec.vocabulary, (record, at) => {
    spec.evolve(state, record, at);
    clock.see(record.ts, at.line);
  });
  const table = journalTable(spec.file);
  if (catalog.tables.has(table)) {
    await sql.unsafe(`select line, body from ${store.ident(table)} order by line`).values().cursor(5000, (rows) => {
      for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
    });
  }
  const scan = verifier.finish();
  return {
    ...(await reportRows(store, sql, catalog, spec.file, table, scan, started)),
    newest_ts: clock.newest,
    last_ts: clock.last,
    backwards: clock.backwards,
    state,
    live_bytes: spec.liveBytes?.(state) ?? null,
    compaction_due: compactionDue(scan.bytes, spec.liveBytes?.(state)),
    index: null,
  };
}

