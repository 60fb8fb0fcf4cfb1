// The chain heads a long-lived process (`crux mcp`, `crux ui`) has seen, per journal: what it read whole and what
// it wrote, acknowledged. Nothing is trusted from them; they are kept to be compared with the server the store
// answers from after it moved to another one (a standby promoted, SPEC §11 "Acknowledged means replicated"): a
// journal the new primary holds shorter than the process saw it, or whose record at the head seen is another,
// lost records that a server acknowledged, and the process says so, naming the journal and how many are gone.
import type { Sql } from './client';
import type { ChainHead } from '../codec/record';
import type { ServerFacts } from './pg-server';
import { journalTable } from './schema';

const UNDEFINED_TABLE = '42P01';

/** How many heads are remembered per journal: enough to recognise where a shorter chain ends. */
const KEEP = 64;

export class SeenHeads {
  /** Per journal, the heads seen, oldest first, each longer than the one before. */
  private readonly heads = new Map<string, ChainHead[]>();
  /** The last primary the heads were seen on. */
  private on: ServerFacts | undefined;

  /**
   * A connection made to `now` (the store's, the dashboard's): on another primary than the heads were seen on (a
   * standby promoted), the warnings of `verify`; then `now` is the primary they are seen on (a verification cut short
   * by a lost connection is made again at the next one). A standby changes nothing.
   */
  async arrived(sql: Sql, schema: string, location: string, now: ServerFacts): Promise<string[]> {
    if (now.standby) return [];
    const before = this.on;
    const warnings =
      before !== undefined && before.identity !== now.identity && this.heads.size > 0 ? await this.verify(sql, schema, location, before, now) : [];
    this.on = now;
    return warnings;
  }

  /** A head read or written on the server the store answers from (the chain only grows). */
  saw(file: string, head: ChainHead): void {
    if (head.seq <= 0) return;
    const known = this.heads.get(file);
    if (known === undefined) {
      this.heads.set(file, [{ seq: head.seq, h: head.h }]);
      return;
    }
    const last = known[known.length - 1]!;
    if (head.seq <= last.seq) return;
    known.push({ seq: head.seq, h: head.h });
    if (known.length > KEEP) known.shift();
  }

  /**
   * Compares the longest head seen of every journal with the journal on the server now answering (`now`, since
   * `before`); returns a warning for each journal that lost records, and forgets what it saw (the process's view is
   * rebuilt from the server, never patched with what it remembers). The count is exact when the server's head is
   * one this process saw (nothing written there since the loss), else a lower bound.
   */
  async verify(sql: Sql, schema: string, location: string, before: ServerFacts, now: ServerFacts): Promise<string[]> {
    const warnings: string[] = [];
    for (const [file, heads] of [...this.heads]) {
      const seen = heads[heads.length - 1]!;
      const table = `"${schema}".${journalTable(file)}`;
      let row: { seq: string | null; head: string | null; h: string | null } | undefined;
      try {
        [row] = await sql.unsafe<{ seq: string | null; head: string | null; h: string | null }[]>(
          `select t.seq::text as seq, t.h as head, (select h from ${table} where seq = $1 limit 1) as h
           from (select 1) one left join (select seq, h from ${table} order by line desc limit 1) t on true`,
          [seen.seq],
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNDEFINED_TABLE) throw error;
      }
      const seq = row?.seq == null ? 0 : Number(row.seq);
      const where = `on ${now.address.name}, the server the store answers from now (before: ${before.address.name})`;
      const why = 'a server that is no longer the primary acknowledged them (an asynchronous standby promoted?); the view is rebuilt from the server';
      if (seq < seen.seq) {
        const exact = seq === 0 || heads.some((x) => x.seq === seq && x.h === row?.head);
        warnings.push(
          `${location} ${file}: ${exact ? '' : 'at least '}${seen.seq - seq} record(s) this process saw are gone: the journal ends at record ${seq} ${where}, this process saw record ${seen.seq}; ${why}`,
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
