// A rewrite of many pieces at once on PostgreSQL (core/line-store.ts, StagedRewrite: `journal redact`, `encrypt`,
// `rekey`): journal rows, history rows and quarantine rows changed inside the one locked transaction, which
// commits whole or not at all. A journal's derived rows that hold its text (the snapshot row) go with it; its
// index and term rows are rebuilt whole after (LockedLines.rewritten).
import { crashPoint } from '../../shared/crash-point';
import type { StoreSpec } from '../codec/store-spec';
import type { HistoryGeneration, QuarantineItem, StagedRewrite } from '../core/line-store';
import type { Sql } from './client';
import { replaceRows, type PgHost, type PgWriter } from './pg-host';
import { arrayLiteral, type Catalog } from './schema';

/** A quarantine row as an item: its key with it. */
export interface PgQuarantineItem extends QuarantineItem {
  readonly journal: string;
  readonly at: Date;
  readonly row: string;
}

/** Every quarantine row, of every journal (its bytes read when asked). */
export async function quarantineItems(store: PgHost, sql: Sql): Promise<PgQuarantineItem[]> {
  const table = store.ident('quarantine');
  const rows = await sql.unsafe<{ journal: string; at: Date; name: string }[]>(`select journal, at, name from ${table} order by at, name`);
  return rows.map(
    (r): PgQuarantineItem => ({
      name: `quarantine/${r.name}`,
      journal: r.journal,
      at: r.at,
      row: r.name,
      read: async () => {
        const [got] = await sql.unsafe<{ bytes: Buffer }[]>(`select bytes from ${table} where journal = $1 and at = $2 and name = $3`, [
          r.journal,
          r.at,
          r.name,
        ]);
        return Buffer.from(got?.bytes ?? []);
      },
    }),
  );
}

export class PgRewriteSet implements StagedRewrite {
  private readonly journals: string[] = [];
  private others = 0;

  constructor(
    private readonly store: PgHost,
    private readonly sql: Sql,
    private readonly catalog: Catalog,
  ) {}

  async journal(spec: StoreSpec<unknown>, text: string): Promise<void> {
    await replaceRows(this.store, this.sql, spec, text);
    if (this.catalog.tables.has('snapshots')) await this.sql.unsafe(`delete from ${this.store.ident('snapshots')} where journal = $1`, [spec.file]);
    this.journals.push(spec.file);
  }

  /** The piece's rows keep their places (line, seq) and time; each takes its new line. */
  async history(file: string, piece: HistoryGeneration, text: string): Promise<void> {
    const history = this.store.ident('history');
    const rows = await this.sql.unsafe<{ line: string }[]>(`select line from ${history} where journal = $1 and generation = $2 order by line`, [
      file,
      piece.id,
    ]);
    const bodies = text.split('\n').slice(0, -1);
    if (bodies.length !== rows.length) throw new Error(`history/${file}#${piece.id}: ${bodies.length} lines for ${rows.length} rows`);
    await this.sql.unsafe(
      `update ${history} h set body = n.body from unnest($3::bigint[], $4::text[]) as n(line, body)
       where h.journal = $1 and h.generation = $2 and h.line = n.line`,
      [file, piece.id, arrayLiteral(rows.map((r) => r.line)), arrayLiteral(bodies)],
    );
    this.others += 1;
  }

  async quarantine(item: QuarantineItem, bytes: Uint8Array): Promise<void> {
    const q = item as PgQuarantineItem;
    await this.sql.unsafe(`update ${this.store.ident('quarantine')} set bytes = $4 where journal = $1 and at = $2 and name = $3`, [
      q.journal,
      q.at,
      q.row,
      Buffer.from(bytes),
    ]);
    this.others += 1;
  }

  async commit(note: string): Promise<void> {
    // What the commit log says once COMMIT is acknowledged (a writer's store keeps it: PgWriter.committing).
    const log = (this.store as Partial<PgWriter>).committing;
    if (this.journals.length > 0 || this.others > 0) log?.push(`${this.journals.join(', ') || 'quarantine'} ${note}`);
    crashPoint('pg-rewrite:staged'); // every row written, COMMIT not yet sent
  }

  /** The transaction rolls back with the error that stopped the rewrite: nothing to undo here. */
  async abort(): Promise<void> {}
}
