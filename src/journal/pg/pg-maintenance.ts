// The PostgreSQL store's copy of a journal in and out (`journal copy`): a restore into an empty store, the history
// as pieces. (Check, compaction and history reads are core/'s, over pg-lines.ts.)
import { CruxError } from '../../shared/errors';
import { decodeOwn, decodeRecord, VERIFY_ALL } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import { SNAPSHOT_EVENT } from '../codec/verify';
import type { HistoryPiece } from '../core/store-boundary';
import type { Sql } from './client';
import type { PgHost } from './pg-host';
import { reindexByKey } from './pg-reindex';
import { countAfterRewrite } from './pg-lines';
import { arrayLiteral, journalTable, type Catalog } from './schema';

/**
 * Rows restored per statement. Small on purpose: a statement's parameters (the rows as array literals, then as the
 * wire's bytes) outlive its await and are collected only by a full GC, so 5,000-row statements let the heap grow to
 * ~200 MB during a copy where 1,000-row ones keep the peak near 150 MB (measured at 100k sessions), no slower.
 */
const RESTORE_ROWS = 1000;

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
    let keys: string[] = [];
    let n = 0;
    const flush = async () => {
      if (bodies.length === 0) return;
      await sql.unsafe(
        `insert into ${history} (journal, generation, compacted_at, line, seq, body, key)
         select $1, $2, $3, * from unnest($4::bigint[], $5::bigint[], $6::text[], $7::text[])`,
        [spec.file, g + 1, newest, arrayLiteral(bodies.map((_, k) => n - bodies.length + k + 1)), arrayLiteral(seqs), arrayLiteral(bodies), arrayLiteral(keys)],
      );
      bodies = [];
      seqs = [];
      keys = [];
    };
    for await (const bytes of piece.lines) {
      n += 1;
      const body = rowBody(bytes, n, piece.name);
      const record = decodeOwn(body);
      if (record.ts > newest) newest = record.ts;
      bodies.push(body);
      seqs.push(record.seq);
      keys.push((record.ev === SNAPSHOT_EVENT ? undefined : spec.keyOf?.(record)) ?? '');
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
