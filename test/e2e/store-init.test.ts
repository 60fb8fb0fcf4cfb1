// `crux store init [--print]`: a store made ready ahead of its first write, on both kinds; --print changes nothing.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshStore, STORE_KINDS, storeExists } from '../helpers/cli';
import { pgSkipReason, psql, psqlScript } from '../helpers/pg';

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
        schema_version: 2,
        created: expect.arrayContaining(['schema version 1', 'schema version 2', 'table journal_sessions', 'table journal_cases']),
      });
      expect((await crux(store, ['--json', 'doctor'])).stdout).toContain('"schema_version":2');
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
    expect(psql(`select max(version) from ${schema}.schema_version`).trim()).toBe('2');
    expect((await crux(store, ['store', 'init'])).stdout).toMatch(/^nothing to do/);
    expect((await crux(store, ['session', 'put', 'a', '{}'])).exitCode).toBe(0);
    expect((await crux(store, ['journal', 'check'])).exitCode).toBe(0);
  });
});
