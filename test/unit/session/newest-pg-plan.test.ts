// given(a PostgreSQL store where thousands of sessions share one update time, closed and open) → when(a limited
// `session list --status closed`, `--all` and the plain list; the store taken back to schema 7 and migrated by a
// write) → then(the server reads each page from a b-tree in the page's order, no tie group sorted (schema 8); on
// schema 7's (name, num_value) b-tree alone it sorts; the migration from 7 makes the index and drops the old one).
import { describe, expect, it } from 'vitest';
import { SESSION_STORE } from '../../../src/domain/session/fold';
import { listNewest } from '../../../src/domain/session/newest-list';
import { importSessions, touchSession } from '../../../src/domain/session/store';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { SCHEMA_VERSION } from '../../../src/journal/pg/schema';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { AgentName, LogicalSessionId } from '../../../src/shared/ids';
import { freshStoreUrl, pgSkipReason, psql, tapReader } from '../../helpers/pg';

const T = Date.parse('2026-12-01T12:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();
const NOW = T + 3_600_000;
/** Sessions of one update time: a tie group the planner would sort whole (3,000 rows of each index name). */
const TIED = 3000;

function lines(): string {
  const out: object[] = [];
  for (let i = 0; i < 5; i++) out.push({ session_id: `new${i}`, state: { i }, updated_at: at(T + (i + 1) * 60_000) });
  for (let i = 0; i < TIED; i++)
    out.push({ session_id: `s${(i * 7919) % TIED}-${i}`, state: { i }, updated_at: at(T), ...(i % 10 < 7 ? { status: 'closed' } : {}) });
  return `${out.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** Records each statement the store's reader runs, with its parameters. */
function recordingParams(store: PgStore): [string, unknown[]][] {
  const seen: [string, unknown[]][] = [];
  tapReader(store, (text, params) => seen.push([text, params]));
  return seen;
}

/** The server's plan of each newest-first page statement `seen` holds, with the table's statistics and sequential scans off. */
function plans(seen: readonly [string, unknown[]][], url: string, schema: string): string[] {
  const pages = seen.filter(([text]) => /order by num_value desc, key collate "C" limit \$3$/.test(text));
  expect(pages.length).toBeGreaterThan(2);
  return pages.map(([page, params]) => {
    const statement = page.replace(/\$(\d)/g, (_, n: string) => {
      const v = params[Number(n) - 1];
      return typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v);
    });
    return psql(`analyze ${schema}.journal_sessions_index; set enable_seqscan = off; explain (analyze, costs off) ${statement}`, url);
  });
}

describe.skipIf(pgSkipReason() !== undefined)('a limited session list on PostgreSQL, of thousands of sessions of one update time', () => {
  it('reads its page from the newest-first b-tree (schema 8), where schema 7 sorted the tie group; a write migrates 7', async () => {
    const url = freshStoreUrl('newestplan');
    const schema = new URL(url).searchParams.get('schema')!;
    const open = () => new PgStore(parseStoreUrl(url), { reporter: { warn: () => {} }, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: [SESSION_STORE] });
    let store = open();
    let seen = recordingParams(store);
    const scope = () => ({ dir: store, agent: undefined as AgentName | undefined, now: NOW });
    const list = async () => {
      seen.length = 0;
      const closed = await listNewest(scope(), { all: true, archived: false, stranded: false, allAgents: false }, 20, { statuses: ['closed'] });
      const all = await listNewest(scope(), { all: true, archived: false, stranded: false, allAgents: false }, 50);
      const plain = await listNewest(scope(), { all: false, archived: false, stranded: false, allAgents: false }, 20);
      const ids = (l: typeof closed) => [l!.total, ...l!.sessions.map((s) => s.session_id)];
      return { seen: [...seen], closed: ids(closed), all: ids(all), plain: ids(plain) };
    };
    try {
      await importSessions(scope(), Buffer.from(lines()), { maxStateBytes: 1 << 20 });
      const first = await list();
      expect(first.closed[0]).toBe((TIED * 7) / 10);
      expect(first.closed).toHaveLength(21);
      expect(first.all.slice(0, 3)).toEqual([TIED + 5, 'new4', 'new3']);
      for (const plan of plans(first.seen, url, schema)) {
        expect(plan, plan).toMatch(/Index (Only )?Scan using journal_sessions_index_newest /);
        expect(plan, plan).not.toMatch(/Sort/);
      }

      // Schema 7 as it was: the (name, num_value) b-tree alone. The same page sorts its tie group there.
      await store.close();
      psql(`set client_min_messages = warning;
        drop index ${schema}.journal_sessions_index_newest;
        create index on ${schema}.journal_sessions_index (name, num_value) where num_value is not null;
        delete from ${schema}.schema_version where version >= 8;`);
      store = open();
      seen = recordingParams(store);
      const before = await list();
      expect([before.closed, before.all, before.plain]).toEqual([first.closed, first.all, first.plain]);
      for (const plan of plans(before.seen, url, schema)) expect(plan, plan).toMatch(/Sort/);

      // The first write migrates: the index made, the one it replaces dropped.
      await touchSession(scope(), 'new0' as LogicalSessionId);
      expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe(String(SCHEMA_VERSION));
      const indexes = psql(
        `select indexname from pg_indexes where schemaname = '${schema}' and tablename = 'journal_sessions_index' order by indexname::text collate "C"`,
      );
      expect(indexes.trim().split('\n')).toEqual([
        'journal_sessions_index_name_text_value_idx',
        'journal_sessions_index_newest',
        'journal_sessions_index_pkey',
      ]);
      const after = await list();
      expect([after.closed, after.plain[1]]).toEqual([first.closed, 'new0']);
      for (const plan of plans(after.seen, url, schema))
        expect(plan, plan).toMatch(/^(?![\s\S]*Sort)[\s\S]*Index (Only )?Scan using journal_sessions_index_newest /);
    } finally {
      await store.close();
    }
  });
});
