// The chain heads a long-lived process (`crux mcp`, `crux ui`) has seen, per journal: what it read whole and what
// it wrote, acknowledged. Nothing is trusted from them; they are kept to be compared with the server the store
// answers from after it moved to another one (a standby promoted, SPEC §11 "Acknowledged means replicated"): a
// journal the new primary holds shorter than the process saw it, or whose record at the head seen is another,
// lost records that a server acknowledged, and the process says so, naming the journal and how many are gone.
import type { ChainHead } from '../codec/record';
import type { Sql } from './client';
import type { ServerFacts } from './pg-server';
import { journalTable } from './schema';

const UNDEFINED_TABLE = '42P01';

export class SeenHeads {
  private readonly heads = new Map<string, ChainHead>();

  /** A head read or written on the server the store answers from (the longest kept: the chain only grows). */
  saw(file: string, head: ChainHead): void {
    if (head.seq <= 0) return;
    const known = this.heads.get(file);
    if (known === undefined || head.seq >= known.seq) this.heads.set(file, { seq: head.seq, h: head.h });
  }

  get size(): number {
    return this.heads.size;
  }

  /**
   * Compares every head seen with the journal on the server now answering (`now`, since `before`); returns a
   * warning for each journal that lost records, and takes the server's heads as seen from then on (the process's
   * view is rebuilt from the server, never patched with what it remembers).
   */
  async verify(sql: Sql, schema: string, location: string, before: ServerFacts, now: ServerFacts): Promise<string[]> {
    const warnings: string[] = [];
    for (const [file, seen] of [...this.heads]) {
      const table = `"${schema}".${journalTable(file)}`;
      let row: { seq: string | null; h: string | null } | undefined;
      try {
        [row] = await sql.unsafe<{ seq: string | null; h: string | null }[]>(
          `select (select seq from ${table} order by line desc limit 1)::text as seq, (select h from ${table} where seq = $1 limit 1) as h`,
          [seen.seq],
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNDEFINED_TABLE) throw error;
      }
      const seq = row?.seq == null ? 0 : Number(row.seq);
      const where = `on ${now.address.name}, the server the store answers from now (before: ${before.address.name})`;
      const why = 'a server that is no longer the primary acknowledged them (an asynchronous standby promoted?); the view is rebuilt from the server';
      if (seq < seen.seq) {
        warnings.push(
          `${location} ${file}: ${seen.seq - seq} record(s) this process saw are gone: the journal ends at record ${seq} ${where}, this process saw record ${seen.seq}; ${why}`,
        );
      } else if (row?.h != null && row.h !== seen.h) {
        warnings.push(
          `${location} ${file}: at least 1 record this process saw is gone: record ${seen.seq} ${where} is not the one this process saw (the chain was written again past the loss); ${why}`,
        );
      }
      this.heads.delete(file);
    }
    return warnings;
  }
}
