// Opening a PostgreSQL store: required by cli/store.ts only when a command names one, and left out of the fast
// bundles without the PostgreSQL engine (build.mjs), so that a data directory's command neither reads nor
// initialises the engine or every store's vocabulary (domain/stores.ts: the cases', handoffs' and facts').
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Reporter } from '../journal/dir/load';
import type { HistoryRetention } from '../journal/dir/history';
import { PgStore } from '../journal/pg/pg-store';
import { parseStoreUrl } from '../journal/pg/url';
import { ALL_STORES } from '../domain/stores';
import { VERSION } from './version';

/** The reporter of the call running now (crux mcp: each tool call's own), set by `reportTo`. */
const calling = new AsyncLocalStorage<Reporter>();

/**
 * A PostgreSQL store at `url`; `variable` names where the URL came from in a message about it. The store is kept
 * for the process (cli/store.ts) and serves every later call: what it meets is told to the reporter of the call it
 * is working for (`reportTo`), `first`'s until another is set — never to the first call's for all of them.
 */
export function openPgStore(url: string, variable: string, first: Reporter, lockTimeoutMs: number, history?: HistoryRetention): PgStore {
  const now = () => calling.getStore() ?? first;
  const reporter: Reporter = {
    warn: (message) => now().warn(message),
    damage: (file, line, reason) => now().damage?.(file, line, reason),
    progress: (phase, done, total) => now().progress?.(phase, done, total),
  };
  calling.enterWith(first);
  return new PgStore(parseStoreUrl(url, variable), { reporter, lockTimeoutMs, cruxVersion: VERSION, specs: ALL_STORES, history });
}

/** From here on in this call (its awaits included, not other calls running at once), the store tells `reporter`. */
export function reportTo(reporter: Reporter): void {
  calling.enterWith(reporter);
}
