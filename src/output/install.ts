// Human rendering of `crux mcp install | uninstall` and `crux hook install | uninstall`, and the store the
// installed agent will use, as both say it.
import { scrubText } from '../shared/scrub';

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
function describeAgentStore(store: AgentStore): string {
  const where = `${store.kind === 'postgres' ? 'the store' : 'the data directory'} ${store.name}`;
  if (store.recorded) return `the agent will use ${where} (from ${store.from}, named in the entry)`;
  if (store.from === 'CRUX_STORE' || store.from === 'CRUX_DATA_DIR')
    return `the entry names no store (--no-store): the agent uses what its own CRUX_STORE or CRUX_DATA_DIR names, else ~/.local/share/crux — not necessarily ${where} (from ${store.from})`;
  return `the agent will use ${where} (${store.from}) unless its own CRUX_STORE or CRUX_DATA_DIR names another`;
}

export interface McpUninstallResult {
  readonly client: string;
  readonly file: string;
  readonly changed: boolean;
  readonly afterwards: string;
}

export interface McpInstallResult extends McpUninstallResult {
  readonly server: { readonly command: string; readonly args: readonly string[] };
  readonly store: AgentStore;
}

export const renderMcpInstalled = (r: McpInstallResult): string =>
  r.changed
    ? `added the crux server (${scrubText([r.server.command, ...r.server.args].join(' '))}) to ${r.file}; ${describeAgentStore(r.store)}; ${r.afterwards}`
    : `the crux server is already in ${r.file}; nothing changed; ${describeAgentStore(r.store)}`;

export const renderMcpUninstalled = (r: McpUninstallResult): string =>
  r.changed ? `removed the crux server from ${r.file}; ${r.afterwards}` : `no crux server in ${r.file}; nothing changed`;

export interface UninstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
}

export interface InstallResult extends UninstallResult {
  readonly command: string;
  readonly store: AgentStore;
}

export const renderInstalled = (r: InstallResult): string =>
  r.changed
    ? `installed \`${scrubText(r.command)}\` for ${r.events.join(', ')} in ${r.settings}; ${describeAgentStore(r.store)}`
    : `the crux hooks are already in ${r.settings}; nothing changed; ${describeAgentStore(r.store)}`;

export const renderUninstalled = (r: UninstallResult): string =>
  r.changed ? `removed the crux hooks of ${r.events.join(', ')} from ${r.settings}` : `no crux hooks in ${r.settings}; nothing changed`;
