// Which store a command works on, and opening it: --store / CRUX_STORE (a PostgreSQL URL) or the data directory.
// The PostgreSQL store (store-pg.ts: its engine, its client, every store's vocabulary) is required only when one
// is named: every other command starts as fast.
import type { DataDirSource } from '../domain/doctor';
import { isAbsolute, join, resolve } from 'node:path';
import { openDirStore } from './store-dir';
import type { JournalStore } from '../journal/core/store-boundary';
import type { Reporter } from '../journal/dir/load';
import type { HistoryRetention } from '../journal/dir/history';
import type { PgStore } from '../journal/pg/pg-store';
import { invalid, usage } from '../shared/errors';

/** Where the store came from (doctor reports it): --store/--data-dir, the environment, $XDG_DATA_HOME, or the default. */
export type StoreSource = DataDirSource;

/** Which store, where its name came from, and why it won (doctor says it: `from --store, which overrides CRUX_DATA_DIR`). */
export type StoreTarget =
  | { readonly kind: 'dir'; readonly path: string; readonly source: StoreSource; readonly why?: string | undefined }
  | { readonly kind: 'postgres'; readonly url: string; readonly source: StoreSource; readonly why?: string | undefined };

const isUrl = (value: string) => /^postgres(ql)?:\/\//i.test(value);

/**
 * --store and --data-dir (flags) win over CRUX_STORE and CRUX_DATA_DIR (environment); a flag of one kind
 * overrides the other's variable. Both flags at once name two stores and are refused; so are both variables
 * without a flag (SPEC §1): a throwaway CRUX_DATA_DIR must never write into the shared store a profile set.
 */
export function resolveStore(flags: { store?: string | undefined; dataDir?: string | undefined }, env: NodeJS.ProcessEnv): StoreTarget {
  if (flags.store !== undefined && flags.dataDir !== undefined) throw usage('--store and --data-dir name two stores', 'give one of them');
  const overrides = (name: string) => (env[name] ? `, which overrides ${name}` : '');
  if (flags.store !== undefined) return { ...storeFromUrl(flags.store, 'flag', '--store'), why: `from --store${overrides('CRUX_DATA_DIR')}` };
  if (flags.dataDir !== undefined) {
    if (flags.dataDir === '') throw invalid('--data-dir must not be empty');
    return { kind: 'dir', path: resolve(flags.dataDir), source: 'flag', why: `from --data-dir${overrides('CRUX_STORE')}` };
  }
  if (env.CRUX_STORE && env.CRUX_DATA_DIR) {
    throw usage('CRUX_STORE and CRUX_DATA_DIR are both set: they name two stores', 'unset one of them, or say which with --store or --data-dir');
  }
  if (env.CRUX_STORE) return { ...storeFromUrl(env.CRUX_STORE, 'env', 'CRUX_STORE'), why: 'from CRUX_STORE' };
  if (env.CRUX_DATA_DIR) return { kind: 'dir', path: resolve(env.CRUX_DATA_DIR), source: 'env', why: 'from CRUX_DATA_DIR' };
  // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME;
  if (xdg && isAbsolute(xdg)) return { kind: 'dir', path: join(xdg, 'crux'), source: 'xdg', why: 'from $XDG_DATA_HOME' };
  // Without an absolute HOME the default would be a path under the current directory: refuse (SPEC §1).
  const home = env.HOME;
  if (!home || !isAbsolute(home)) {
    const why = home === undefined ? 'HOME is not set' : home === '' ? 'HOME is empty' : `HOME is not an absolute path (${JSON.stringify(home)})`;
    throw invalid(`no data directory: ${why} and XDG_DATA_HOME is not an absolute path`, 'give --data-dir, or set CRUX_DATA_DIR, XDG_DATA_HOME or HOME');
  }
  return { kind: 'dir', path: join(home, '.local', 'share', 'crux'), source: 'default', why: 'the default, ~/.local/share/crux' };
}

function storeFromUrl(value: string, source: StoreSource, what: string): StoreTarget {
  if (!isUrl(value)) throw invalid(`${what} must be a postgres:// or postgresql:// URL`, 'for a data directory, use --data-dir or CRUX_DATA_DIR');
  return { kind: 'postgres', url: value, source };
}

/** `journal copy --to`: a URL is a PostgreSQL store, anything else a data directory's path. */
export function targetOf(value: string): StoreTarget {
  if (value === '') throw invalid('--to must not be empty');
  return isUrl(value) ? { kind: 'postgres', url: value, source: 'flag' } : { kind: 'dir', path: resolve(value), source: 'flag' };
}

/**
 * PostgreSQL stores opened by this process, by URL: `crux mcp` builds a context per tool call, and every call
 * reuses the one store (one connection, replaced between transactions when lost) through a handle of its own, each
 * call's damage and warnings told to its own reporter (PgStore.forCaller). Closed when the command is done, since a connection would keep
 * the process alive.
 */
const opened = new Map<string, PgStore>();

export function openStore(target: StoreTarget, reporter: Reporter, lockTimeoutMs: number, history?: HistoryRetention): JournalStore {
  if (target.kind === 'dir') return openDirStore(target.path, reporter, lockTimeoutMs, history);
  const key = `${lockTimeoutMs} ${target.url}`;
  const known = opened.get(key);
  if (known !== undefined) return known.forCaller(reporter);
  const { openPgStore } = require('./store-pg') as typeof import('./store-pg');
  const store = openPgStore(target.url, target.source === 'env' ? 'CRUX_STORE' : '--store', reporter, lockTimeoutMs, history);
  opened.set(key, store);
  return store;
}

/** Ends every connection this process opened (main calls it once the command has finished). */
export async function closeStores(): Promise<void> {
  const stores = [...opened.values()];
  opened.clear();
  await Promise.all(stores.map((store) => store.close()));
}
