// The bound of a schema migration's statements (schema.ts migrate): an index a migration builds reads every row of a
// store, tens of seconds at a million sessions, past the bounds any other statement has (client.ts: silence past
// CRUX_LOCK_TIMEOUT + STALL_GRACE_MS ends the connection; the server's statement_timeout, CRUX_LOCK_TIMEOUT + 60 s).

/** How long a migration's statements may run: the server's statement_timeout and the client's wait for an answer both. */
export const MIGRATION_BOUND_MS = 10 * 60_000;

/** Migrations running in this process (withMigrationBound): while any does, the client waits MIGRATION_BOUND_MS. */
let migrating = 0;

/** Whether a migration runs in this process: the client then waits MIGRATION_BOUND_MS for an answer. */
export const migrationRunning = (): boolean => migrating > 0;

/** Runs `fn` (a migration's statements) with the client-side wait for an answer raised to MIGRATION_BOUND_MS. */
export async function withMigrationBound<T>(fn: () => Promise<T>): Promise<T> {
  migrating++;
  try {
    return await fn();
  } finally {
    migrating--;
  }
}
