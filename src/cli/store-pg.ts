// Opening a PostgreSQL store: required by cli/store.ts only when a command names one, and left out of the fast
// bundles without the PostgreSQL engine (build.mjs), so that a data directory's command neither reads nor
// initialises the engine or every store's vocabulary (domain/stores.ts: the cases', handoffs' and facts').
import type { Reporter } from '../journal/dir/load';
import type { HistoryRetention } from '../journal/dir/history';
import { PgStore } from '../journal/pg/pg-store';
import { parseStoreUrl } from '../journal/pg/url';
import { ALL_STORES } from '../domain/stores';
import { VERSION } from './version';

/**
 * A PostgreSQL store at `url`; `variable` names where the URL came from in a message about it. What it meets is told
 * to `reporter`. The store is kept for the process (cli/store.ts) and serves every later caller through a handle of
 * its own (PgStore.forCaller): each call of `crux mcp` is told what it met, never the first call's reporter for all.
 */
export function openPgStore(url: string, variable: string, reporter: Reporter, lockTimeoutMs: number, history?: HistoryRetention): PgStore {
  return new PgStore(parseStoreUrl(url, variable), { reporter, lockTimeoutMs, cruxVersion: VERSION, specs: ALL_STORES, history });
}
