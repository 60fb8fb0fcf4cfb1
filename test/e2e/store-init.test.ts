// `crux store init [--print]`: a store made ready ahead of its first write, on both kinds; --print changes nothing.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshStore, STORE_KINDS, storeExists } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { pgSkipReason, psql, psqlScript } from '../helpers/pg';
import { SCHEMA_VERSION } from '../../src/journal/pg/schema';

describe.each(STORE_KINDS)('crux store init on a %s store', (kind) => {
  it('--print exits 0 and writes nothing; init makes the store the next command uses; a second init does nothing', async () => {
    const store = freshStore(kind);
    const printed = await crux(store, ['store', 'init', '--print']);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(printed.stderr).toBe('');
    if (kind === 'pg')
      expect(printed.stdout).toMatch(
        /^-- crux .*\nbegin;\nselect pg_advisory_xact_lock\(.*\n[\s\S]*create schema if not exists "[a-z0-9_]+";[\s\S]*create table [\s\S]*\ncommit;\n$/,
      );
    else expect(printed.stdout).toBe(`would create ${store}, ${join(store, '.lock')}: nothing was changed\n`);
    expect(storeExists(store)).toBe(false);
    const json = JSON.parse((await crux(store, ['--json', 'store', 'init', '--print'])).stdout);
    expect(json).toMatchObject({ kind: kind === 'pg' ? 'postgres' : 'dir', printed: true, schema_version: kind === 'pg' ? 0 : null });
    expect(storeExists(store)).toBe(false);

    const init = await crux(store, ['--json', 'store', 'init']);
    expect(init.exitCode, init.stderr).toBe(0);
    const report = JSON.parse(init.stdout);
    expect(report.printed).toBe(false);
    if (kind === 'pg') {
      expect(report).toMatchObject({
        schema_version: SCHEMA_VERSION,
        created: expect.arrayContaining([
          'schema version 1',
          'schema version 2',
          'schema version 3',
          'schema version 4',
          'schema version 8',
          'table journal_sessions',
          'table journal_cases',
        ]),
      });
      expect((await crux(store, ['--json', 'doctor'])).stdout).toContain(`"schema_version":${SCHEMA_VERSION}`);
    } else {
      expect(report.created).toEqual([store, join(store, '.lock')]);
      expect(fs.statSync(store).mode & 0o777).toBe(0o700);
    }
    expect((await crux(store, ['session', 'put', 'a', '{"x":1}'])).exitCode).toBe(0);
    expect((await crux(store, ['session', 'get', 'a'])).stdout).toBe('{"x":1}');
    const again = await crux(store, ['store', 'init']);
    expect(again.stdout).toMatch(/^nothing to do: .* is ready/);
    if (kind === 'pg') expect((await crux(store, ['store', 'init', '--print'])).stdout).toMatch(/nothing to do/);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});

describe.skipIf(pgSkipReason() !== undefined)('crux store init --print on PostgreSQL', () => {
  it('prints a script a DBA runs with psql, after which crux writes into the schema without creating anything', async () => {
    const store = freshStore('pg');
    const script = (await crux(store, ['store', 'init', '--print'])).stdout;
    psqlScript(`\\set ON_ERROR_STOP 1\n${script}`);
    const schema = new URL(store).searchParams.get('schema');
    expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe(String(SCHEMA_VERSION));
    expect((await crux(store, ['store', 'init'])).stdout).toMatch(/^nothing to do/);
    expect((await crux(store, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});

/** SQL taking the index tables back to schema 7: the newest-first b-tree (migration 8) as the (name, num_value) one it replaced. */
const to7 = (schema: string): string =>
  ['sessions', 'cases']
    .map((j) => `drop index ${schema}.journal_${j}_index_newest; create index on ${schema}.journal_${j}_index (name, num_value) where num_value is not null;`)
    .join('\n');

/** The indexes of the index tables, in code-unit order. */
const indexIndexes = (schema: string): string =>
  psql(`select indexname from pg_indexes where schemaname = '${schema}' and tablename like 'journal\\_%\\_index' order by indexname::text collate "C"`);

/** Each index table has the newest-first b-tree (migration 8), none the (name, num_value) one it replaced. */
function newestEverywhere(schema: string): void {
  const indexes = indexIndexes(schema);
  expect(indexes).not.toMatch(/name_num_value/);
  expect(indexes.match(/_index_newest\n/g)?.length).toBe(indexes.match(/_index_pkey\n/g)?.length);
}

/**
 * Takes a schema this crux made back to version 4 (as a crux of schema 4 left it): the counts tables, the fact
 * indexes (both migration 5's and 7's) and the history rows' keys gone, the term rows of the terms' version before (2).
 */
function downgradeTo4(schema: string): void {
  const facts = ['sessions', 'cases'].flatMap((j) =>
    ['1', '2', '3', '4', '5', '6', '1d', '2d', '3d', '4d', '5d'].map((n) => `${schema}.journal_${j}_terms_f${n}`),
  );
  psqlScript(`\\set ON_ERROR_STOP 1
    set client_min_messages = warning;
    begin;
    drop table ${schema}.journal_sessions_counts, ${schema}.journal_cases_counts;
    drop index ${facts.join(', ')};
    ${to7(schema)}
    update ${schema}.term_indexes set version = 2;
    alter table ${schema}.history drop column key;
    delete from ${schema}.schema_version where version >= 5;
    commit;`);
}

/** Takes a schema this crux made back to version 2 (as crux 2 left it): what migrations 3 to 8 added, removed again. */
function downgradeTo2(schema: string): void {
  psqlScript(`\\set ON_ERROR_STOP 1
    set client_min_messages = warning;
    begin;
    drop function ${schema}.crux_derived_changed() cascade;
    drop table ${schema}.term_indexes;
    drop table ${schema}.journal_sessions_terms, ${schema}.journal_cases_terms;
    drop table ${schema}.journal_sessions_counts, ${schema}.journal_cases_counts;
    alter table ${schema}.secondary_indexes drop column trusted, add column rows bigint not null default 0, add column sum numeric not null default 0;
    drop table ${schema}.journal_stats;
    ${to7(schema)}
    alter table ${schema}.history drop column key;
    delete from ${schema}.schema_version where version >= 3;
    commit;`);
}

describe.skipIf(pgSkipReason() !== undefined)('a PostgreSQL store at an older schema version', () => {
  const seed = async (store: string) => {
    expect((await crux(store, ['--agent', 'bot', 'session', 'put', 'a', '{"x":1}'])).exitCode).toBe(0);
    for (const task of ['deploy the api', 'deploy the web', 'fix the api'])
      expect((await crux(store, ['case', 'record', '--task', task, '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
  };
  const answers = async (store: string) => ({
    agent: (await crux(store, ['--json', '--agent', 'bot', 'session', 'list'])).stdout,
    retrieve: JSON.parse((await crux(store, ['--json', 'case', 'retrieve', 'deploy', 'api'])).stdout).results.map((r: any) => [r.case.task, r.similarity]),
  });

  it('is read as it is, migrated by the first write, and then answers through its new rows', async () => {
    const store = freshStore('pg');
    await seed(store);
    const before = await answers(store);
    const schema = new URL(store).searchParams.get('schema')!;
    downgradeTo2(schema);
    expect(await answers(store)).toEqual(before);
    expect((await crux(store, ['session', 'put', 'b', '{}'])).exitCode).toBe(0);
    expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe(String(SCHEMA_VERSION));
    // The first write to cases makes its term rows (the migration left them untrusted), trusted from then on.
    expect((await crux(store, ['case', 'record', '--task', 'unrelated', '--action', 'a', '--outcome', 'o'])).exitCode).toBe(0);
    expect(psql(`select trusted from ${schema}.term_indexes`).trim()).toBe('t');
    expect(psql(`select count(*) from ${schema}.journal_cases_terms`).trim()).toBe('4');
    expect(await answers(store)).toEqual(before);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });

  it('is migrated by `store init`, which `--print` shows first', async () => {
    const store = freshStore('pg');
    await seed(store);
    const before = await answers(store);
    const schema = new URL(store).searchParams.get('schema')!;
    downgradeTo2(schema);
    const printed = (await crux(store, ['store', 'init', '--print'])).stdout;
    expect(printed).toMatch(/it is at version 2/);
    expect(printed).toMatch(/-- schema version 3\n[\s\S]*create table "[a-z0-9_]+".term_indexes/);
    expect(printed).toMatch(/create trigger crux_derived_rows after insert or update or delete on "[a-z0-9_]+".journal_cases_terms/);
    const init = JSON.parse((await crux(store, ['--json', 'store', 'init'])).stdout);
    expect(init).toMatchObject({ schema_version: SCHEMA_VERSION, created: expect.arrayContaining(['schema version 3', 'derived tables of journal_cases']) });
    expect(await answers(store)).toEqual(before);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(store, ['store', 'init'])).stdout).toMatch(/^nothing to do/);
  });
  it('at version 7, is migrated by `store init` after a migration killed before its commit: the newest-first b-trees made, the old ones gone', async () => {
    const store = freshStore('pg');
    await seed(store);
    const before = await answers(store);
    const schema = new URL(store).searchParams.get('schema')!;
    const made = indexIndexes(schema);
    expect(made).toContain('journal_sessions_index_newest');
    psqlScript(`\\set ON_ERROR_STOP 1
      set client_min_messages = warning;
      begin; ${to7(schema)} delete from ${schema}.schema_version where version >= 8; commit;`);
    const at7 = indexIndexes(schema);
    expect(at7).not.toContain('_newest');
    const printed = (await crux(store, ['store', 'init', '--print'])).stdout;
    expect(printed).toMatch(/it is at version 7/);
    expect(printed).toMatch(/-- schema version 8\n[\s\S]*create index if not exists %I on %s.%I \(name, num_value desc, key collate "C"\)/);
    // The migration's transaction killed before its commit (the server ends the backend): nothing of it stays.
    expect(() => psqlScript(`\\set ON_ERROR_STOP 1\n${printed.replace(/\ncommit;\n$/, '\nselect pg_terminate_backend(pg_backend_pid());\n')}`)).toThrow();
    expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe('7');
    expect(indexIndexes(schema)).toBe(at7);
    const init = JSON.parse((await crux(store, ['--json', 'store', 'init'])).stdout);
    expect(init).toMatchObject({ schema_version: SCHEMA_VERSION, created: expect.arrayContaining(['schema version 8']) });
    expect(indexIndexes(schema).split('\n')).toEqual(expect.arrayContaining(made.split('\n')));
    newestEverywhere(schema);
    expect(await answers(store)).toEqual(before);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(store, ['store', 'init'])).stdout).toMatch(/^nothing to do/);
  });

  it('at version 4, its term rows of the terms before are stale, not damage; its next write counts and indexes them', async () => {
    const store = freshStore('pg');
    await seed(store);
    const before = await answers(store);
    const tags = (await crux(store, ['--json', 'case', 'list', '--limit', '2'])).stdout;
    const schema = new URL(store).searchParams.get('schema')!;
    downgradeTo4(schema);
    expect(await answers(store)).toEqual(before);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    // `store init` migrates (the indexes on the rows there, an empty counts table): still stale, still no damage.
    expect((await crux(store, ['store', 'init'])).exitCode).toBe(0);
    expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe(String(SCHEMA_VERSION));
    // Six facts by the sixth ascending (migration 5), five by it descending (7).
    expect(psql(`select count(*) from pg_indexes where schemaname = '${schema}' and indexname like 'journal_cases_terms_f%'`).trim()).toBe('11');
    // The newest-first b-tree of each index table (8), in place of the (name, num_value) one.
    newestEverywhere(schema);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    expect((await crux(store, ['--json', 'case', 'list', '--limit', '2'])).stdout).toBe(tags);
    expect((await crux(store, ['case', 'record', '--task', 'unrelated', '--action', 'a', '--outcome', 'o', '--tag', 'x'])).exitCode).toBe(0);
    expect(psql(`select trusted from ${schema}.term_indexes where journal = 'cases.jsonl'`).trim()).toBe('t');
    expect(psql(`select sum(n) from ${schema}.journal_cases_counts where term = ' all'`).trim()).toBe('4');
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
    // The counts edited by hand: no longer trusted (the same answers), and check names them.
    psql(`update ${schema}.journal_cases_counts set n = n + 1 where term = ' all'`);
    expect(psql(`select trusted from ${schema}.term_indexes where journal = 'cases.jsonl'`).trim()).toBe('f');
    expect(await answers(store)).toEqual(before);
    const check = await crux(store, ['journal', 'check']);
    expect(check.exitCode).toBe(9);
    expect(check.stdout + check.stderr).toMatch(/journal_cases_counts disagrees with a replay/);
  });
});
