// Human rendering of `crux mcp install` and `crux mcp uninstall`.
import { scrubText } from '../shared/scrub';
import { type AgentStore, describeAgentStore } from './agent-store';

export interface McpInstallResult {
  readonly client: string;
  readonly file: string;
  readonly changed: boolean;
  readonly server: { readonly command: string; readonly args: readonly string[] };
  readonly store: AgentStore;
  readonly afterwards: string;
}

export interface McpUninstallResult {
  readonly client: string;
  readonly file: string;
  readonly changed: boolean;
  readonly afterwards: string;
}

export const renderMcpInstalled = (r: McpInstallResult): string =>
  r.changed
    ? `added the crux server (${scrubText([r.server.command, ...r.server.args].join(' '))}) to ${r.file}; ${describeAgentStore(r.store)}; ${r.afterwards}`
    : `the crux server is already in ${r.file}; nothing changed; ${describeAgentStore(r.store)}`;

export const renderMcpUninstalled = (r: McpUninstallResult): string =>
  r.changed ? `removed the crux server from ${r.file}; ${r.afterwards}` : `no crux server in ${r.file}; nothing changed`;
