// Human rendering of `crux hook install` and `crux hook uninstall`.
import { scrubText } from '../shared/scrub';
import { type AgentStore, describeAgentStore } from './agent-store';

export interface InstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
  readonly command: string;
  readonly store: AgentStore;
}

export interface UninstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
}

export const renderInstalled = (r: InstallResult): string =>
  r.changed
    ? `installed \`${scrubText(r.command)}\` for ${r.events.join(', ')} in ${r.settings}; ${describeAgentStore(r.store)}`
    : `the crux hooks are already in ${r.settings}; nothing changed; ${describeAgentStore(r.store)}`;

export const renderUninstalled = (r: UninstallResult): string =>
  r.changed ? `removed the crux hooks of ${r.events.join(', ')} from ${r.settings}` : `no crux hooks in ${r.settings}; nothing changed`;
