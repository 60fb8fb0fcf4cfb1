// `crux journal copy --to postgres://…` of a store larger than one of the copy's batches (1,000 rows a statement,
// 2,000 entities a derived round; made 10 rows and 7 entities by the test hooks, so that a few dozen sessions and
// cases span several of each): the derived rows built set-wise once the rows are in equal a replay, the tables
// carry the same indexes as a store written command by command, the statistics row is the server's count, and a
// copy killed midway leaves every journal it finished whole and the others absent (man crux-journal: each journal
// arrives whole or not at all).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir, journalLines, type Run } from '../helpers/cli';
import { freshStoreUrl, pgSkipReason, psql } from '../helpers/pg';

const NOW = ['--now', '2026-11-29T21:00:00Z'];
const SESSIONS = 45;
const CASES = 26;
/** The copy's batches made small: 10 rows a statement (and a page), 7 entities a derived round. */
const SMALL = { CRUX_TEST_FETCH_ROWS: '10', CRUX_TEST_KEYS_PER_ROUND: '7' };

async function ok(run: Promise<Run>): Promise<Run> {
  const r = await run;
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
}

/** Sessions (closed, open, expiring) and cases (tagged, failures) over several of the copy's batches. */
async function large(): Promise<string> {
  const dir = freshDataDir();
  const sessions = Array.from({ length: SESSIONS }, (_, i) =>
    JSON.stringify({
      session_id: `s${i}`,
      state: { i, notes: 'n'.repeat(i % 50) },
      ...(i % 3 === 0
        ? { status: 'closed', updated_at: '2026-10-01T00:00:00Z' }
        : { updated_at: `2026-11-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z` }),
    }),
  );
  await ok(crux(dir, [...NOW, 'session', 'import', '-'], { input: sessions.join('\n') }));
  for (const id of ['s1', 's2', 's4']) await ok(crux(dir, [...NOW, 'session', 'archive', id, '--reason', 'done']));
  await ok(crux(dir, [...NOW, 'session', 'put', 's5', '{"again":true}']));
  // A reset (a delete, then the id again): the rows before it count no more in the journal's live bytes.
  await ok(crux(dir, [...NOW, 'session', 'put', 'z1', JSON.stringify({ big: 'b'.repeat(5000) })]));
  await ok(crux(dir, [...NOW, 'session', 'delete', 'z1', '--yes']));
  await ok(crux(dir, [...NOW, 'session', 'put', 'z1', '{"small":1}']));
  const words = ['nginx', 'kernel', 'deploy', 'staging', 'restart', 'timeout', 'cache', 'index'];
  const cases = Array.from({ length: CASES }, (_, i) =>
    JSON.stringify({
      task: `${words[i % 8]} the ${words[(i * 7) % 8]} w${i % 97}`,
      action: `a${i}`,
      outcome: i % 5 === 0 ? 'failed' : 'worked',
      success: i % 5 !== 0,
      reward: (i % 10) / 10,
      tags: [words[i % 3], `t${i % 11}`],
    }),
  );
  await ok(crux(dir, [...NOW, 'case', 'import', '-'], { input: cases.join('\n') }));
  return dir;
}

/** A schema's index definitions, its name taken out (to compare two schemas). */
const indexDefs = (url: string): string[] => {
  const schema = new URL(url).searchParams.get('schema')!;
  return psql(`select indexdef from pg_indexes where schemaname = '${schema}' order by indexname`, url)
    .split('\n')
    .filter(Boolean)
    .map((d) => d.replaceAll(`"${schema}".`, '').replaceAll(`${schema}.`, ''));
};

describe.skipIf(pgSkipReason() !== undefined)('journal copy over several batches', () => {
  it('equals a replay: check healthy with the derived rows trusted, every read as on the source, the same indexes', async () => {
    const source = await large();
    const url = freshStoreUrl();
    await ok(crux(source, ['journal', 'copy', '--to', url], { env: SMALL }));
    const check = JSON.parse((await ok(crux(url, ['--json', 'journal', 'check']))).stdout);
    expect(check.healthy).toBe(true);
    // journal check compares every index, term and count row with a replay; it also reports rows it cannot trust.
    for (const j of check.journals) expect(j.derived ?? undefined, j.name).toBeUndefined();
    const schema = new URL(url).searchParams.get('schema')!;
    // Every derived table bound afresh and trusted (reads take the indexed path).
    const bound = psql(
      `select journal || ':' || trusted from "${schema}".secondary_indexes union all select journal || ':' || trusted from "${schema}".term_indexes`,
      url,
    );
    expect(bound).toMatch(/sessions\.jsonl:true/);
    expect(bound).toMatch(/cases\.jsonl:true/);
    expect(bound).not.toMatch(/:false/);
    // The statistics row (compaction's trigger), counted in the copy's pass, is what the server counts from the rows.
    for (const j of ['sessions', 'cases']) {
      const t = `"${schema}".journal_${j}`;
      const counted = psql(
        `select (select sum(octet_length(body) + 1) from ${t}) || ' ' || (select sum(m) from (select r.key, max(octet_length(r.body)) as m from ${t} r
           where r.key is not null and r.line >= coalesce((select max(x.line) from ${t} x where x.key = r.key and x.resets), 0) group by r.key) k)`,
        url,
      ).trim();
      expect(psql(`select bytes || ' ' || live from "${schema}".journal_stats where journal = '${j}.jsonl'`, url).trim(), j).toBe(counted);
    }
    const reads = [
      ['session', 'list', '--status', 'closed', '--limit', '20', '--json'],
      ['session', 'list', '--all', '--limit', '50', '--json'],
      ['session', 'list', '--archived', '--json'],
      ['session', 'get', 's5'],
      ['__complete', 'session', 's44'],
      ['case', 'list', '--only-failure', '--limit', '20', '--json'],
      ['case', 'list', '--tag', 'kernel', '--limit', '20', '--json'],
      ['case', 'retrieve', 'restart', 'nginx', 'staging', '--top-k', '10', '--json'],
      ['doctor', '--json'],
    ];
    for (const args of reads) {
      const there = await ok(crux(url, [...NOW, ...args]));
      const here = await ok(crux(source, [...NOW, ...args]));
      if (args[0] === 'doctor') {
        // The engines' facts differ; the counts by status and by tag are the replay's on both.
        const pick = (out: string) => JSON.stringify(JSON.parse(out).sessions ?? JSON.parse(out).counts ?? null);
        expect(pick(there.stdout), args.join(' ')).toBe(pick(here.stdout));
      } else expect(there.stdout, args.join(' ')).toBe(here.stdout);
    }
    // The derived tables' indexes, dropped while the rows went in, are those a store written command by command has.
    const written = freshStoreUrl();
    await ok(crux(written, [...NOW, 'session', 'put', 'x', '{}']));
    await ok(crux(written, [...NOW, 'case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o']));
    const ofTwo = (defs: string[]) => defs.filter((d) => / ON journal_(sessions|cases)/.test(d));
    expect(ofTwo(indexDefs(url)).length).toBeGreaterThan(10);
    expect(ofTwo(indexDefs(url))).toEqual(ofTwo(indexDefs(written)));
  }, 300_000);

  it('killed midway: the journals copied before are whole and verify, the one being copied is absent, a second copy is refused', async () => {
    const source = await large();
    const url = freshStoreUrl();
    // The second journal (cases) killed with all its rows written, before its COMMIT.
    const killed = await crux(source, ['journal', 'copy', '--to', url], { env: { ...SMALL, CRUX_TEST_CRASH_AT: 'pg-restore:before-commit#2' } });
    expect(killed.exitCode, killed.stderr).not.toBe(0);
    const schema = new URL(url).searchParams.get('schema')!;
    const digest = psql(`select md5(string_agg(body, E'\\n' order by line) || E'\\n') from "${schema}".journal_sessions`, url).trim();
    expect(digest).toBe(
      createHash('md5')
        .update(fs.readFileSync(join(source, 'sessions.jsonl')))
        .digest('hex'),
    );
    expect(psql(`select count(*) from pg_tables where schemaname = '${schema}' and tablename = 'journal_cases'`, url).trim()).toMatch(/^[01]$/);
    expect(journalLines(url, 'cases.jsonl')).toEqual([]);
    const check = JSON.parse((await ok(crux(url, ['--json', 'journal', 'check']))).stdout);
    expect(check.healthy).toBe(true);
    expect((await ok(crux(url, [...NOW, 'session', 'list', '--status', 'closed', '--limit', '5', '--json']))).stdout).toBe(
      (await ok(crux(source, [...NOW, 'session', 'list', '--status', 'closed', '--limit', '5', '--json']))).stdout,
    );
    const again = await crux(source, ['journal', 'copy', '--to', url]);
    expect(again.exitCode).toBe(4);
    expect(again.stderr).toMatch(/not empty/);
  }, 300_000);
});
