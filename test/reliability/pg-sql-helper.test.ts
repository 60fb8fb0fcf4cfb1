import { expect, it } from 'vitest';
import { psql } from '../helpers/pg';
import { sqlText } from '../helpers/pg-sql';
it('matches psql', async () => {
  const qs = [
    `select 1, true, false, null::text, 'a|b', 1.5::float8, 10000000000::bigint, array['x','y'], '{"a":1}'::jsonb, now()::date`,
    `select 't' where false`,
    `create temp table kk (a int); insert into kk values (1),(2); select * from kk order by a`,
    `select count(*) from pg_class where relname = 'kk' and relnamespace = pg_my_temp_schema()`,
    `set session_replication_role = replica; select current_setting('session_replication_role')`,
    `select current_setting('session_replication_role')`,
    `begin; select set_config('crux.writer', 'on', true); commit;`,
  ];
  for (const q of qs) expect(await sqlText(q), q).toBe(psql(q));
  await expect(sqlText('begin; select 1/0; commit;')).rejects.toThrow(/division/);
  expect(await sqlText('select 2')).toBe('2\n');
});
