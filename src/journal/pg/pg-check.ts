// `journal check [--repair]` on PostgreSQL: every row verified as replay verifies a line; the history rows as
// history/ files are (each compaction's rows a chain, each continuing the one before, the journal continuing the
// newest); and the derived rows compared with a replay (SPEC §11). --repair quarantines bad rows and re-chains
// the rest, quarantines damaged history, and rebuilds derived rows that disagree.
import type { ChainHead, JournalRecord } from '../codec/record';
import { SNAPSHOT_EVENT } from '../codec/verify';
import { BEFORE_REPAIR, rechain, REMOVED_LINES, removedLineRecord } from '../core/policy';
import { journalName, type StoreSpec } from '../codec/store-spec';
import type { JournalReport, ProgressSink } from '../core/store-boundary';
import type { HistoryReport } from '../dir/history';
import type { Sql } from './client';
import { replaceRows, type PgHost } from './pg-host';
import { indexDisagreements, indexOfOtherVersion } from './pg-index';
import { termDisagreements } from './pg-terms';
import { loadPgSnapshot } from './pg-snapshot';
import { RowVerifier, type RowScan } from './rows';
import { indexTable, journalTable, termsTable, type Catalog } from './schema';

async function quarantinedCount(store: PgHost, sql: Sql, catalog: Catalog, file: string): Promise<number> {
  if (!catalog.tables.has('quarantine')) return 0;
  const [row] = await sql.unsafe<{ n: string }[]>(`select count(*) as n from ${store.ident('quarantine')} where journal = $1`, [file]);
  return Number(row?.n ?? 0);
}

/** What `journal check` and doctor report of one journal table's verified rows. */
export async function reportRows(store: PgHost, sql: Sql, catalog: Catalog, file: string, scan: RowScan, started: number): Promise<JournalReport> {
  return {
    name: journalName(file),
    file,
    exists: catalog.tables.has(journalTable(file)),
    records: scan.records,
    bytes: scan.bytes,
    problems: scan.problems.map(({ line, reason }) => ({ line, reason })),
    torn_tail: false,
    quarantined: await quarantinedCount(store, sql, catalog, file),
    replay_ms: Math.round((performance.now() - started) * 10) / 10,
  };
}

async function quarantine(store: PgHost, sql: Sql, file: string, name: string, bytes: string, ts: string): Promise<string> {
  await sql.unsafe(`insert into ${store.ident('quarantine')} (journal, at, name, bytes) values ($1, $2, $3, $4)`, [file, ts, name, Buffer.from(bytes)]);
  return `${store.location} quarantine/${name}`;
}

export async function checkJournals(
  store: PgHost,
  specs: readonly StoreSpec<unknown>[],
  opts: { repair: boolean; ts: string; progress?: ProgressSink },
): Promise<JournalReport[]> {
  return store.locked(async (sql, catalog) => {
    const reports: JournalReport[] = [];
    for (const spec of specs) reports.push(await checkOne(store, sql, catalog, spec, opts));
    return reports;
  });
}

async function checkOne(
  store: PgHost,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  opts: { repair: boolean; ts: string; progress?: ProgressSink },
): Promise<JournalReport> {
  const kept: JournalRecord[] = [];
  const keys = new Set<string>();
  const state = spec.initial();
  const started = performance.now();
  const table = journalTable(spec.file);
  let first: JournalRecord | undefined;
  const verifier = new RowVerifier(spec.vocabulary, (record, at) => {
    first ??= record;
    spec.evolve(state, record, at);
    const key = record.ev === SNAPSHOT_EVENT ? undefined : spec.keyOf?.(record);
    if (key !== undefined) keys.add(key);
    if (opts.repair) kept.push(record);
  });
  const rows: { line: number; body: string }[] = [];
  if (catalog.tables.has(table)) {
    await sql
      .unsafe(`select line, body from ${store.ident(table)} order by line`)
      .values()
      .cursor(5000, (batch) => {
        for (const [line, body] of batch as [string, string][]) {
          const row = { line: Number(line), body };
          verifier.visit(row);
          if (opts.repair) rows.push(row);
        }
        opts.progress?.(spec.file, verifier.visited, 0);
      });
  }
  const scan = verifier.finish();
  const history = await checkHistoryRows(store, sql, catalog, spec, first, opts);
  let report: JournalReport = { ...(await reportRows(store, sql, catalog, spec.file, scan, started)), ...(history ? { history } : {}) };
  if (opts.repair && scan.problems.length > 0) {
    // Every row as it was and each removed row go to quarantine; the rest are re-chained in order.
    const skipped = new Set(scan.problems.filter((p) => p.skipped).map((p) => p.line));
    // Each row's offset is the one it has in the journal as a file (what `journal copy` writes).
    const removed: string[] = [];
    let offset = 0;
    for (const r of rows) {
      if (skipped.has(r.line)) removed.push(removedLineRecord(r.line, offset, scan.problems.find((p) => p.line === r.line)!.reason, Buffer.from(r.body)));
      offset += Buffer.byteLength(r.body) + 1;
    }
    const names = [await quarantine(store, sql, spec.file, `${spec.file}.${BEFORE_REPAIR}`, rows.map((r) => `${r.body}\n`).join(''), opts.ts)];
    if (removed.length > 0) names.push(await quarantine(store, sql, spec.file, `${spec.file}.${REMOVED_LINES}`, `${removed.join('\n')}\n`, opts.ts));
    await replaceRows(store, sql, spec, rechain(kept, opts.ts));
    await store.refreshIndex(sql, catalog, spec, 'all');
    // Counted again: what the quarantine holds now, the repair's own items with it.
    return { ...report, quarantined: await quarantinedCount(store, sql, catalog, spec.file), repaired: { removed: skipped.size, quarantine: names } };
  }
  if (scan.problems.length > 0) return report;
  // Derived rows, compared with the replay just made (only of a journal that verifies: damage is reported above).
  const derived = await derivedDisagreements(store, sql, catalog, spec, state, keys);
  if (derived.length > 0) {
    report = { ...report, derived: { problems: derived } };
    if (opts.repair) {
      await store.refreshIndex(sql, catalog, spec, 'all', { whole: state });
      if (catalog.tables.has('snapshots')) await sql.unsafe(`delete from ${store.ident('snapshots')} where journal = $1`, [spec.file]);
      report = { ...report, derived: { problems: derived, rebuilt: true } };
    }
  } else if (opts.repair && catalog.tables.has(table)) {
    // Rows that agree with the replay but lost their trust (written by hand, then put back): trusted again, so that
    // reads take the indexed path once more.
    const trust = await store.derivedTrusted(sql, catalog, spec);
    if ((spec.secondary !== undefined && !trust.index) || (spec.terms !== undefined && !trust.terms)) {
      await store.refreshIndex(sql, catalog, spec, 'all', { whole: state });
    }
  }
  return report;
}

/** "3 entities ("a", "b", "c")", the first five named. */
function entities(keys: readonly string[]): string {
  const shown = keys
    .slice(0, 5)
    .map((k) => JSON.stringify(k))
    .join(', ');
  return `${keys.length} entit${keys.length === 1 ? 'y' : 'ies'} (${shown}${keys.length > 5 ? ', …' : ''})`;
}

/** How the derived rows of a journal disagree with a replay (`state`, the journal folded whole): one line each. */
async function derivedDisagreements<S>(store: PgHost, sql: Sql, catalog: Catalog, spec: StoreSpec<S>, state: S, keys: Set<string>): Promise<string[]> {
  const problems: string[] = [];
  const ident = (t: string) => store.ident(t);
  if (
    spec.secondary !== undefined &&
    catalog.tables.has(journalTable(spec.file)) &&
    !(await indexOfOtherVersion(sql, ident, catalog, spec as StoreSpec<unknown>))
  ) {
    const wrong = await indexDisagreements(sql, ident, catalog, spec, state, keys);
    if (wrong.length > 0) problems.push(`${indexTable(journalTable(spec.file))} disagrees with a replay for ${entities(wrong)}`);
  }
  if (spec.terms !== undefined && catalog.tables.has(journalTable(spec.file))) {
    const wrong = await termDisagreements(sql, ident, catalog, spec, state);
    if (wrong.length > 0) problems.push(`${termsTable(journalTable(spec.file))} disagrees with a replay for ${entities(wrong)}`);
  }
  if (spec.snapshot !== undefined) {
    // A snapshot that verifies (its row, its digest) and folds forward to another state than the replay's.
    const snapshot = await loadPgSnapshot(sql, ident, catalog, spec);
    if (snapshot !== undefined) {
      const forward = snapshot.state;
      const verifier = new RowVerifier(spec.vocabulary, (record, at) => spec.evolve(forward, record, at), snapshot.head);
      await sql
        .unsafe(`select line, body from ${store.ident(journalTable(spec.file))} where line > $1 order by line`, [snapshot.line])
        .values()
        .cursor(5000, (rows) => {
          for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
        });
      verifier.finish();
      if (!Buffer.from(spec.snapshot.encode(forward)).equals(Buffer.from(spec.snapshot.encode(state)))) {
        problems.push(`the snapshot row of ${spec.file} (taken at line ${snapshot.line}) disagrees with a replay`);
      }
    }
  }
  return problems;
}

/**
 * The history rows of a journal, verified as history/ files are: each compaction's rows one chain of its own, each
 * continuing the one before (its opening snapshot names the previous head), the journal continuing the newest.
 * With repair, a damaged generation moves whole into the quarantine table.
 */
async function checkHistoryRows(
  store: PgHost,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  journalFirst: JournalRecord | undefined,
  opts: { repair: boolean; ts: string },
): Promise<HistoryReport | undefined> {
  if (!catalog.tables.has('history')) return undefined;
  const generations = await sql.unsafe<{ generation: number }[]>(
    `select distinct generation from ${store.ident('history')} where journal = $1 order by generation`,
    [spec.file],
  );
  if (generations.length === 0) return undefined;
  const problems: HistoryReport['problems'] = [];
  const damaged: number[] = [];
  let records = 0;
  let bytes = 0;
  let previous: ChainHead | undefined;
  const name = (g: number) => `history/${spec.file}#${g}`;
  const continues = (where: string, first: JournalRecord | undefined, line: number) => {
    if (previous === undefined || first === undefined) return;
    const named = first.ev === SNAPSHOT_EVENT ? (first.data as { previous_head?: ChainHead } | undefined)?.previous_head : undefined;
    if (named?.seq !== previous.seq || named?.h !== previous.h)
      problems.push({ file: where, line, reason: `chain break: does not continue the history before it (head seq ${previous.seq})` });
  };
  for (const { generation } of generations) {
    let first: JournalRecord | undefined;
    const verifier = new RowVerifier(
      spec.vocabulary,
      (record) => {
        first ??= record;
      },
      undefined,
      true,
    );
    await sql
      .unsafe(`select line, body from ${store.ident('history')} where journal = $1 and generation = $2 order by line`, [spec.file, generation])
      .values()
      .cursor(5000, (rows) => {
        for (const [line, body] of rows as [string, string][]) verifier.visit({ line: Number(line), body });
      });
    const scan = verifier.finish();
    const before = problems.length;
    continues(name(generation), first, 1);
    for (const p of scan.problems) problems.push({ file: name(generation), line: p.line, reason: p.reason });
    if (problems.length > before) damaged.push(generation);
    records += scan.records;
    bytes += scan.bytes;
    previous = scan.head;
  }
  continues(journalTable(spec.file), journalFirst, 1);
  let quarantined: string[] | undefined;
  if (opts.repair) {
    quarantined = [];
    for (const generation of damaged) {
      const rows = await sql.unsafe<{ body: string }[]>(`select body from ${store.ident('history')} where journal = $1 and generation = $2 order by line`, [
        spec.file,
        generation,
      ]);
      quarantined.push(await quarantine(store, sql, spec.file, `${spec.file}.history-${generation}`, rows.map((r) => `${r.body}\n`).join(''), opts.ts));
      await sql.unsafe(`delete from ${store.ident('history')} where journal = $1 and generation = $2`, [spec.file, generation]);
    }
  }
  return { files: generations.length, records, bytes, problems, ...(quarantined ? { quarantined } : {}) };
}
