// A history read of one key on PostgreSQL (issue 47): each generation of the `history` table through its `key`
// column (schema 6: copied from the journal's rows when a compaction moves them there, '' for a record without a
// key; null in rows an older crux moved, whose generation is then read whole), so that `session history` of one
// session reads that session's rows, not every generation. A generation is read by key when its first and last
// rows are keyed, its rows from the second on are all there (their count, by the primary key), and every row read
// verifies; else it is read whole (history.ts), which tells what it finds.
import type { JournalRecord } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { PieceKeyRecords } from '../core/history';
import type { Sql } from './client';
import { rowPosition, rowRecord } from './pg-fold';

type Row = { line: string; seq: string; key: string | null; body: string };

/** PieceKeyRecords of `key` over the history table `history` (an identifier), for journal `spec.file`. */
export function pgPieceKeyReader(sql: Sql, history: string, spec: StoreSpec<unknown>, key: string): PieceKeyRecords | undefined {
  const keyOf = spec.keyOf;
  if (keyOf === undefined) return undefined;
  const verified = (row: Row, first: boolean): { record: JournalRecord; at: ReturnType<typeof rowPosition> } | undefined => {
    const record = rowRecord(row.body, spec.vocabulary, { snapshot: first });
    return record === undefined ? undefined : { record, at: rowPosition(Number(row.line), row.body) };
  };
  return async (piece) => {
    const generation = Number(piece.id);
    const edges = await sql.unsafe<(Row & { part: string; n: string | null })[]>(
      `(select 'f' as part, line, seq, key, body, null::bigint as n from ${history} where journal = $1 and generation = $2 order by line limit 2)
       union all (select 'l', line, seq, key, body, null from ${history} where journal = $1 and generation = $2 order by line desc limit 1)
       union all (select 'n', null, null, null, null, count(*) from ${history} where journal = $1 and generation = $2 and line > 1)`,
      [spec.file, generation],
    );
    const firsts = edges.filter((r) => r.part === 'f').sort((x, y) => Number(x.line) - Number(y.line));
    const [a, b] = firsts;
    const c = edges.find((r) => r.part === 'l');
    const count = edges.find((r) => r.part === 'n');
    if (a === undefined || c === undefined || a.key === null || c.key === null || Number(a.line) !== 1) return undefined;
    const first = verified(a, true);
    const last = verified(c, false) ?? (c.line === a.line ? first : undefined);
    if (first === undefined || last === undefined) return undefined;
    const second = b === undefined ? undefined : verified(b, false);
    if (b !== undefined && second === undefined) return undefined;
    // Every row from the second to the last is there: as many as their lines span.
    if (b !== undefined && Number(count?.n) !== Number(c.line) - Number(b.line) + 1) return undefined;
    const rows = await sql.unsafe<Row[]>(
      `select line, seq, key, body from ${history} where journal = $1 and generation = $2 and key = $3 and line > 1 order by line`,
      [spec.file, generation, key],
    );
    const records = [];
    for (const row of rows) {
      const found = verified(row, false);
      if (found === undefined || keyOf(found.record) !== key) return undefined;
      records.push(found);
    }
    return { first, second, records, head: { seq: last.record.seq, h: last.record.h } };
  };
}
