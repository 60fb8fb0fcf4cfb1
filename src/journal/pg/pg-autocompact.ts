// Automatic compaction on PostgreSQL, by the rule a data directory follows (policy.ts, compactionDue): a journal
// past COMPACT_MIN_BYTES whose live records need at most half of it is compacted after the write that took it
// there. What the rule needs (the journal's bytes and an estimate of its live bytes) is kept in `journal_stats`,
// one row per journal bound to its head and brought forward by each write in its own transaction, so that the
// decision costs a write the rows of the entities it touched, never a read of the journal:
// - bytes: the row's count plus the batch's;
// - live: from the transaction's state when it holds the whole journal (spec.liveBytes, as a data directory
//   reckons it), else, for a journal of entities, the sum over entities of each one's largest row since its last
//   resetting record (what compaction keeps of it, roughly; a data directory's index estimates the same way),
//   moved by the touched entities' change.
// A row not bound to the head the write started from (a journal rewritten by compaction, repair or restore, or
// never counted) is recounted from the table in that write, once. The compaction itself runs after the write has
// committed, in a transaction of its own under the advisory lock, which re-reads the row: of writers on many
// hosts that each saw it due, the first compacts and the others find it done.
import { compactionDue } from '../core/policy';
import type { StoreSpec } from '../codec/store-spec';
import type { ChainHead } from '../codec/record';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { keyRows } from './pg-fold';
import { arrayLiteral, journalTable, type Catalog } from './schema';

/** The statistics row of a journal, as the rule reads it. */
export interface JournalStats {
  readonly line: number;
  readonly h: string;
  readonly bytes: number;
  readonly live: number;
}

type Ident = (table: string) => string;

/** Each touched entity's largest row since its last resetting record (absent: no row yet). */
async function largestRows(q: Sql, ident: Ident, file: string, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const t = ident(journalTable(file));
  const rows = await q.unsafe<{ key: string; m: string }[]>(`select k.key, max(octet_length(r.body)) as m from ${keyRows(t)} group by k.key`, [
    arrayLiteral(keys),
  ]);
  return new Map(rows.map((r) => [r.key, Number(r.m)]));
}

/** The row as stored, or undefined (no table yet, or no row). */
async function readStats(q: Sql, ident: Ident, catalog: Catalog, file: string): Promise<JournalStats | undefined> {
  if (!catalog.tables.has('journal_stats')) return undefined;
  const [row] = await q.unsafe<{ line: string; h: string; bytes: string; live: string }[]>(
    `select line, h, bytes, live from ${ident('journal_stats')} where journal = $1`,
    [file],
  );
  return row === undefined ? undefined : { line: Number(row.line), h: row.h, bytes: Number(row.bytes), live: Number(row.live) };
}

/** Counts a journal from its table: its bytes (a line and its `\n` each) and, for a journal of entities, its live estimate. */
async function recount(q: Sql, ident: Ident, spec: StoreSpec<unknown>): Promise<{ bytes: number; live: number }> {
  const t = ident(journalTable(spec.file));
  const [row] = await q.unsafe<{ bytes: string | null; live: string | null }[]>(
    `select (select sum(octet_length(body) + 1) from ${t}) as bytes,
            (select sum(m) from (select r.key, max(octet_length(r.body)) as m from ${t} r
               where r.key is not null and r.line >= coalesce((select max(x.line) from ${t} x where x.key = r.key and x.resets), 0)
               group by r.key) per_key) as live`,
  );
  return { bytes: Number(row?.bytes ?? 0), live: Number(row?.live ?? 0) };
}

/** Writes the row, bound to the journal's head after this write. */
async function writeStats(q: Sql, ident: Ident, file: string, stats: JournalStats): Promise<void> {
  await q.unsafe(
    `insert into ${ident('journal_stats')} (journal, line, h, bytes, live) values ($1, $2, $3, $4, $5)
     on conflict (journal) do update set line = excluded.line, h = excluded.h, bytes = excluded.bytes, live = excluded.live`,
    [file, stats.line, stats.h, stats.bytes, Math.round(stats.live)],
  );
}

/**
 * One write's part of the upkeep, around its insert: `before` runs before the batch's rows go in (the touched
 * entities' largest rows as they were), `after` once they are in; it writes the row and tells whether the
 * journal is now due for compaction.
 */
export async function trackGrowth<S>(
  q: Sql,
  ident: Ident,
  catalog: Catalog,
  spec: StoreSpec<S>,
  batch: {
    readonly lines: readonly string[];
    readonly keys: readonly string[];
    readonly before: { line: number; head: ChainHead };
    readonly whole?: S | undefined;
  },
  insert: () => Promise<void>,
): Promise<boolean> {
  if (!catalog.tables.has('journal_stats')) {
    await insert();
    return false;
  }
  const stored = await readStats(q, ident, catalog, spec.file);
  const bound = stored !== undefined && stored.line === batch.before.line && stored.h === (batch.before.line === 0 ? '' : batch.before.head.h);
  // A journal of entities is always estimated by its rows (one unit from write to write, whatever each loaded).
  const keyed = spec.keyOf !== undefined;
  const was = bound && keyed ? await largestRows(q, ident, spec.file, batch.keys) : new Map<string, number>();
  await insert();
  let bytes: number;
  let live: number | undefined;
  if (bound) {
    bytes = stored.bytes;
    for (const line of batch.lines) bytes += Buffer.byteLength(line) + 1;
    live = stored.live;
    if (keyed) for (const [key, m] of await largestRows(q, ident, spec.file, batch.keys)) live += m - (was.get(key) ?? 0);
  } else {
    const counted = await recount(q, ident, spec as StoreSpec<unknown>);
    bytes = counted.bytes;
    live = keyed ? counted.live : undefined;
  }
  // A journal without entities is estimated from its whole state, as on a data directory; without one (a write that
  // appended without loading it) the estimate stands, or, unknown, is the whole journal (nothing is due).
  if (!keyed) live = batch.whole !== undefined && spec.liveBytes !== undefined ? spec.liveBytes(batch.whole) : bound ? live : bytes;
  const line = batch.before.line + batch.lines.length;
  const last = batch.lines.at(-1);
  const h = last === undefined ? '' : (JSON.parse(last) as { h: string }).h;
  await writeStats(q, ident, spec.file, { line, h, bytes, live: live ?? bytes });
  return compactionDue(bytes, live);
}

/** Whether a journal is (still) due, read under the lock by the compaction that follows a write. */
export async function stillDue(q: Sql, ident: Ident, catalog: Catalog, spec: StoreSpec<unknown>, head: { line: number; h: string }): Promise<boolean> {
  const stats = await readStats(q, ident, catalog, spec.file);
  return stats !== undefined && stats.line === head.line && stats.h === head.h && compactionDue(stats.bytes, stats.live);
}

/**
 * The statistics row of a journal just rewritten (compaction, restore) or found with nothing dead, bound to its new
 * head, so that the next write need not count it: `known` (its bytes and live estimate) when the caller has them,
 * else counted afresh from the table, where a journal without entities takes `wholeLive` (its state's estimate),
 * unknown after a restore (then the whole journal: nothing is due until a write that loads it says otherwise).
 */
export async function countAfterRewrite(
  store: PgHost,
  sql: Sql,
  catalog: Catalog,
  spec: StoreSpec<unknown>,
  opts: { known?: { bytes: number; live: number }; wholeLive?: number | undefined },
): Promise<void> {
  if (!catalog.tables.has('journal_stats')) return;
  const counted = opts.known ?? (await recount(sql, store.ident, spec));
  const live = opts.known !== undefined || spec.keyOf !== undefined ? counted.live : (opts.wholeLive ?? counted.bytes);
  const { line, head } = await store.headOf(sql, catalog, spec.file);
  await writeStats(sql, store.ident, spec.file, { line, h: line === 0 ? '' : head.h, bytes: counted.bytes, live });
}
