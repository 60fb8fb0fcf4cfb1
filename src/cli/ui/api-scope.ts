// What every dashboard request reads with: the global options and environment `crux ui` was started with.
import type { GlobalOptions } from '../context';
import type { PgReader } from '../../journal/pg/pg-reader';

/** What an API request needs beyond its path: the global options and environment `crux ui` was started with. */
export interface ApiScope {
  readonly globals: GlobalOptions;
  readonly env: NodeJS.ProcessEnv;
  /** On a PostgreSQL store, the dashboard's own connection (journal tails, table sizes). */
  readonly pg?: PgReader | undefined;
}
