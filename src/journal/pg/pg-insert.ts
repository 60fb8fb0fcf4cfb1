// Appending encoded lines to a journal's table: each row with the columns the database indexes (seq, hash, the
// entity's key, whether the record resets it), a bounded number of rows per statement.
import { decodeOwn } from '../codec/record';
import { SNAPSHOT_EVENT } from '../codec/scan';
import type { StoreSpec } from '../codec/store-spec';
import type { Reporter } from '../core/store-boundary';
import type { Sql } from './client';
import { arrayLiteral, journalTable } from './schema';

/** Rows inserted per statement. */
const INSERT_ROWS = 5000;

/**
 * Inserts encoded lines after `line`, INSERT_ROWS a statement: every statement stays short, so that a server
 * silent past the client's bound (client.ts) has stopped answering, whatever the size of the batch.
 */
export async function insertLines<S>(
  q: Sql,
  ident: (table: string) => string,
  reporter: Reporter,
  spec: StoreSpec<S>,
  lines: readonly string[],
  afterLine: number,
): Promise<void> {
  // A batch of many statements (an import) tells its progress, as a data directory's write does (one Reporter).
  const progress = lines.length > INSERT_ROWS ? reporter.progress?.bind(reporter) : undefined;
  for (let i = 0; i < lines.length; i += INSERT_ROWS) {
    progress?.('writing', i, lines.length);
    await insertSome(q, ident, spec, lines.slice(i, i + INSERT_ROWS), afterLine + i);
  }
  progress?.('writing', lines.length, lines.length);
}

async function insertSome<S>(q: Sql, ident: (table: string) => string, spec: StoreSpec<S>, lines: readonly string[], afterLine: number): Promise<void> {
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
    `insert into ${ident(journalTable(spec.file))} (line, seq, h, body, key, resets)
     select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::boolean[])`,
    [arrayLiteral(lineNos), arrayLiteral(seqs), arrayLiteral(hashes), arrayLiteral(lines), arrayLiteral(keys), arrayLiteral(resets)],
  );
}
