// given(random histories of sessions and cases in a PostgreSQL store — puts, closes, archives, deletes, imports (a
// batch), cases recorded with tags and deleted — then at most one change written by hand: a body that no longer
// verifies, a row deleted (a chain break, or a batch left incomplete), a row's `key` column set to another entity's,
// to none, or two rows' keys swapped)
// → when(every derived row is rebuilt entity by entity, two entities a round and three rows a page: pg-rebuild.ts
// reindexByKey, the path of every whole rebuild)
// → then(the index rows, the activity tally, the term rows and their counts are those a whole fold of the journal
// writes (PgStore.fold, then pg-index.ts writeIndexRows and pg-terms.ts writeTermRows: the path it replaced), and
// they are bound and trusted; the rows' key and resets columns are their records' again, for the reads by key).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_STORE, deleteCase, recordCase } from '../../../src/domain/case/store';
import { SESSION_STORE } from '../../../src/domain/session/fold';
import * as sessions from '../../../src/domain/session/store';
import { decodeRecord, VERIFY_ALL } from '../../../src/journal/codec/record';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { SNAPSHOT_EVENT } from '../../../src/journal/codec/verify';
import { keepsIndexRows, writeIndexRows } from '../../../src/journal/pg/pg-index';
import { reindexByKey } from '../../../src/journal/pg/pg-rebuild';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { writeTermRows } from '../../../src/journal/pg/pg-terms';
import { countsTable, indexTable, journalTable, termsTable } from '../../../src/journal/pg/schema';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import type { AgentName, CaseId, LogicalSessionId } from '../../../src/shared/ids';
import { FULL, STRESS } from '../../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../../helpers/pg';

// Histories: 6 in `npm test` (~0.8 CPU-s each: a schema and a few dozen writes), 40 in CI's run, 300 in the stress run.
const RUNS = STRESS ? 300 : FULL ? 40 : 6;
const START = Date.parse('2026-11-01T00:00:00Z');
const MINUTE = 60_000;
const quiet = { warn: () => {} };
const WORDS = ['deploy', 'cache', 'index', 'timeout'];
const SPECS = [SESSION_STORE, CASE_STORE] as StoreSpec<unknown>[];

type Step =
  | { op: 'put' | 'close' | 'archive' | 'delete'; agent: number; id: number; skew: number }
  | { op: 'import'; ids: number[] }
  | { op: 'record'; id: number; words: number[]; tags: number[]; success: boolean }
  | { op: 'unrecord'; id: number };
type Damage = { how: 'flip' | 'delete' | 'rekey' | 'unkey' | 'swap'; file: number; at: number; other: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), agent: fc.nat(2), id: fc.nat(7), skew: fc.integer({ min: -300, max: 90 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constantFrom('close' as const, 'archive' as const, 'delete' as const),
      agent: fc.nat(2),
      id: fc.nat(7),
      skew: fc.integer({ min: -300, max: 90 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('import' as const), ids: fc.uniqueArray(fc.nat(9), { minLength: 2, maxLength: 4 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('record' as const),
      id: fc.nat(7),
      words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 3 }),
      tags: fc.array(fc.nat(WORDS.length - 1), { maxLength: 2 }),
      success: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unrecord' as const), id: fc.nat(7) }) },
);
const damage: fc.Arbitrary<Damage | null> = fc.option(
  fc.record({
    how: fc.constantFrom('flip' as const, 'delete' as const, 'rekey' as const, 'unkey' as const, 'swap' as const),
    file: fc.nat(1),
    at: fc.nat(),
    other: fc.nat(),
  }),
  { freq: 4 },
);

/** The steps, after a session put and a case recorded (so that both journals have their tables). */
async function apply(store: PgStore, steps: readonly Step[]): Promise<void> {
  let now = START;
  const first: Step[] = [
    { op: 'put', agent: 0, id: 0, skew: 0 },
    { op: 'record', id: 0, words: [0], tags: [], success: true },
  ];
  for (const s of [...first, ...steps]) {
    now += 7 * MINUTE;
    const at = 'skew' in s ? now + s.skew * MINUTE : now;
    const ignore = () => undefined;
    if (s.op === 'import') {
      const lines = s.ids.map((i) => JSON.stringify({ session_id: `imp${i}`, state: { i }, updated_at: new Date(now - i * MINUTE).toISOString() }));
      await sessions.importSessions({ dir: store, agent: undefined, now }, Buffer.from(`${lines.join('\n')}\n`), { maxStateBytes: 1 << 20 }).catch(ignore);
    } else if (s.op === 'record') {
      const draft = {
        task: s.words.map((w) => WORDS[w]).join(' '),
        context: null,
        action: 'a',
        outcome: 'o',
        success: s.success,
        reward: s.success ? 1 : 0,
        tags: s.tags.map((t) => WORDS[t]!),
        source_receipt: null,
      };
      await recordCase({ dir: store, now }, draft, `c${s.id}-${now}` as CaseId).catch(ignore);
    } else if (s.op === 'unrecord') {
      const sql = `select key from ${schemaOf(store)}.journal_cases where key is not null order by line limit 1 offset ${s.id}`;
      const row = (() => {
        try {
          return psql(sql, urlOf(store)).trim();
        } catch {
          return ''; // no case yet: no table
        }
      })();
      if (row) await deleteCase({ dir: store, now }, row as CaseId).catch(ignore);
    } else {
      const scope = { dir: store, agent: [undefined, 'a', 'b'][s.agent] as AgentName | undefined, now: at };
      const id = `s${s.id}` as LogicalSessionId;
      if (s.op === 'put') await sessions.putSession(scope, id, { state: `{"n":${now}}` }).catch(ignore);
      else if (s.op === 'close') await sessions.closeSession(scope, id, { outcome: 'completed' }).catch(ignore);
      else if (s.op === 'archive') await sessions.archiveSession(scope, id, 'done').catch(ignore);
      else await sessions.deleteSession(scope, id).catch(ignore);
    }
  }
}

const urls = new WeakMap<PgStore, string>();
const urlOf = (store: PgStore) => urls.get(store)!;
const schemaOf = (store: PgStore) => `"${parseStoreUrl(urlOf(store)).schema}"`;

/** A change written by hand to one journal's rows (none when the journal has too few). */
function spoil(store: PgStore, d: Damage): void {
  const table = `${schemaOf(store)}.${journalTable(SPECS[d.file]!.file)}`;
  const lines = psql(`select line from ${table} order by line`, urlOf(store)).trim().split('\n').filter(Boolean).map(Number);
  if (lines.length < 2) return;
  const line = lines[d.at % lines.length]!;
  const other = lines[d.other % lines.length]!;
  const sql = {
    flip: `update ${table} set body = replace(body, '"ts":"2', '"ts":"3') where line = ${line}`,
    delete: `delete from ${table} where line = ${line}`,
    rekey: `update ${table} set key = (select key from ${table} where line = ${other}) where line = ${line}`,
    unkey: `update ${table} set key = null where line = ${line}`,
    swap: `update ${table} set key = case when line = ${line} then (select key from ${table} where line = ${other})
           else (select key from ${table} where line = ${line}) end where line in (${line}, ${other})`,
  }[d.how];
  psql(sql, urlOf(store));
}

/** Every derived row of the journals (index and tally, terms, counts), in one order, and whether they are trusted. */
function derived(store: PgStore): string {
  const s = schemaOf(store);
  const out: string[] = [];
  for (const spec of SPECS) {
    const t = journalTable(spec.file);
    if (keepsIndexRows(spec)) out.push(psql(`select key, name, text_value, num_value from ${s}.${indexTable(t)} order by 1, 2`, urlOf(store)));
    if (spec.terms !== undefined) out.push(psql(`select key, array_to_string(terms, ' '), facts from ${s}.${termsTable(t)} order by 1`, urlOf(store)));
    if (spec.terms?.counted !== undefined) out.push(psql(`select term, value, n from ${s}.${countsTable(t)} where n <> 0 order by 1, 2`, urlOf(store)));
  }
  out.push(psql(`select journal, trusted from ${s}.secondary_indexes union all select journal, trusted from ${s}.term_indexes order by 1, 2`, urlOf(store)));
  return out.join('\n--\n');
}

/** The rows as the path this one replaced wrote them: the journal folded whole, then every row written from the state. */
async function wholeFold(store: PgStore): Promise<void> {
  await store.locked(async (sql, catalog) => {
    for (const spec of SPECS) {
      const { state } = await store.fold(sql, catalog, spec, { quiet: true });
      const { line, head } = await store.headOf(sql, catalog, spec.file);
      const bound = { line, h: line === 0 ? '' : head.h };
      // Every entity a row names, by its key column or by its record (a replay's entities: core/check.ts).
      const rows = await sql.unsafe<{ key: string | null; body: string }[]>(`select key, body from ${store.ident(journalTable(spec.file))}`);
      const keys = new Set<string>();
      for (const { key, body } of rows) {
        if (key !== null) keys.add(key);
        const decoded = decodeRecord(body, VERIFY_ALL);
        const own = decoded.ok && decoded.record.ev !== SNAPSHOT_EVENT ? spec.keyOf?.(decoded.record) : undefined;
        if (own !== undefined) keys.add(own);
      }
      await writeIndexRows(sql, store.ident, spec, state, [...keys], true, bound);
      await writeTermRows(sql, store.ident, spec, state, 'all', bound);
    }
  });
}

describe.skipIf(pgSkipReason() !== undefined)("PostgreSQL's derived rows rebuilt entity by entity", () => {
  beforeAll(() => {
    process.env.CRUX_TEST_KEYS_PER_ROUND = '2';
    process.env.CRUX_TEST_FETCH_ROWS = '3';
  });
  afterAll(() => {
    delete process.env.CRUX_TEST_KEYS_PER_ROUND;
    delete process.env.CRUX_TEST_FETCH_ROWS;
  });

  it(
    'are the rows a whole fold writes, for any history and any change by hand',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), damage, async (steps, d) => {
          const url = freshStoreUrl('rebuild');
          const store = new PgStore(parseStoreUrl(url), { reporter: quiet, lockTimeoutMs: 10_000, cruxVersion: 'test', specs: SPECS });
          urls.set(store, url);
          try {
            await apply(store, steps);
            if (d !== null) spoil(store, d);
            await wholeFold(store);
            const want = derived(store);
            await store.locked(async (sql, catalog) => {
              for (const spec of SPECS) await reindexByKey(store, sql, catalog, spec);
            });
            expect(derived(store)).toEqual(want);
            expect(want).not.toMatch(/\|f$/m);
            // The key and resets columns a read by key relies on are the records' again.
            await store.locked(async (sql) => {
              for (const spec of SPECS) {
                const rows = await sql.unsafe<{ key: string | null; resets: boolean; body: string }[]>(
                  `select key, resets, body from ${store.ident(journalTable(spec.file))}`,
                );
                for (const { key, resets, body } of rows) {
                  const decoded = decodeRecord(body, VERIFY_ALL);
                  if (!decoded.ok || !spec.vocabulary.has(decoded.record.ev)) continue;
                  const own = spec.keyOf?.(decoded.record);
                  expect({ key, resets }).toEqual({ key: own ?? null, resets: own !== undefined && spec.resets?.(decoded.record) === true });
                }
              }
            });
          } finally {
            await store.close();
            psql(`drop schema if exists ${schemaOf(store)} cascade`, url);
          }
        }),
        { numRuns: RUNS },
      );
    },
    RUNS * 15_000,
  );
});
