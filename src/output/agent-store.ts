// The store an installed agent will use (`crux mcp install`, `crux hook install`), as their output says it.

export interface AgentStore {
  readonly kind: 'dir' | 'postgres';
  /** The data directory's path, or the server's URL without its password. */
  readonly name: string;
  /** Where the install found it: --store or --data-dir, CRUX_STORE or CRUX_DATA_DIR, $XDG_DATA_HOME, the default. */
  readonly from: string;
  /** The entry names it (--data-dir or --store): the agent uses it whatever its own environment says. */
  readonly recorded: boolean;
}

/** One clause, after what was written: which store the agent will use, and whether the entry pins it. */
export function describeAgentStore(store: AgentStore): string {
  const where = `${store.kind === 'postgres' ? 'the store' : 'the data directory'} ${store.name}`;
  if (store.recorded) return `the agent will use ${where} (from ${store.from}, named in the entry)`;
  if (store.from === 'CRUX_STORE' || store.from === 'CRUX_DATA_DIR')
    return `the entry names no store (--no-store): the agent uses what its own CRUX_STORE or CRUX_DATA_DIR names, else ~/.local/share/crux — not necessarily ${where} (from ${store.from})`;
  return `the agent will use ${where} (${store.from}) unless its own CRUX_STORE or CRUX_DATA_DIR names another`;
}
