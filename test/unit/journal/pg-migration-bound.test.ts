// given(a connection whose bound on a silent server is CRUX_LOCK_TIMEOUT + the stall grace, the lock wait 0.2 s and
// the grace 0.6 s by its test hook, CRUX_TEST_STALL_GRACE_MS, not 4 s) → when(a statement silent past it, alone and
// as a migration's; a migration in a transaction) → then(alone it fails as a server that stopped answering; a
// migration's waits (MIGRATION_BOUND_MS), and the transaction's own server bound is back after the migration).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClient, type Sql, storeError } from '../../../src/journal/pg/client';
import { MIGRATION_BOUND_MS, withMigrationBound } from '../../../src/journal/pg/migration-bound';
import { migrate, readCatalog, SCHEMA_VERSION } from '../../../src/journal/pg/schema';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { freshStoreUrl, pgSkipReason } from '../../helpers/pg';

const LOCK_MS = 200;
/** The client's grace on a silent server past the lock wait (STALL_GRACE_MS, 4 000 ms, lowered for this file). */
const GRACE_MS = 600;
/** Past the client's bound (LOCK_MS + GRACE_MS), far within the server's (LOCK_MS + 60 s). */
const SILENT_S = 1.5;

// An isolated file (not in SHARED_GRAPH): the hook is this process's for the file's one test.
beforeAll(() => {
  process.env.CRUX_TEST_STALL_GRACE_MS = String(GRACE_MS);
});
afterAll(() => {
  delete process.env.CRUX_TEST_STALL_GRACE_MS;
});

describe.skipIf(pgSkipReason() !== undefined)('the bound of a migration on PostgreSQL', () => {
  it('lets a migration statement run past the client bound that ends any other, and restores the server bound after', async () => {
    const url = parseStoreUrl(freshStoreUrl('migbound'));
    expect(url.tls).toBe(false);
    const open = () => openClient(url, { lockTimeoutMs: LOCK_MS, address: url.hosts[0]! });
    const alone = open();
    try {
      const started = Date.now();
      const failed = await alone.sql`select pg_sleep(${SILENT_S})`.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(storeError(failed, url, LOCK_MS)?.message).toMatch(new RegExp(`stopped answering within ${LOCK_MS + GRACE_MS} ms`));
      // Ended by the client's bound, not by the statement's end.
      expect(Date.now() - started).toBeLessThan(SILENT_S * 1000);
    } finally {
      await alone.end(1);
    }
    const migrating = open();
    try {
      expect(MIGRATION_BOUND_MS).toBeGreaterThan((SILENT_S + 1) * 1000);
      await withMigrationBound(() => migrating.sql`select pg_sleep(${SILENT_S})`);
      const bounds = await migrating.sql.begin(async (t) => {
        const tx = t as unknown as Sql;
        const before = await tx`show statement_timeout`;
        const catalog = await migrate(tx, url.schema, await readCatalog(tx, url.schema), 'test');
        const after = await tx`show statement_timeout`;
        return { before: before[0]!.statement_timeout, after: after[0]!.statement_timeout, version: catalog.version };
      });
      expect(bounds).toEqual({ before: `${60_000 + LOCK_MS}ms`, after: `${60_000 + LOCK_MS}ms`, version: SCHEMA_VERSION });
    } finally {
      await migrating.end(1);
    }
  }, 30_000);
});
