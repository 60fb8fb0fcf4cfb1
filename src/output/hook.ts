// Human rendering of `crux hook install` and `crux hook uninstall`.

export interface InstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
  readonly command: string;
}

export interface UninstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
}

export const renderInstalled = (r: InstallResult): string =>
  r.changed ? `installed \`${r.command}\` for ${r.events.join(', ')} in ${r.settings}` : `the crux hooks are already in ${r.settings}; nothing changed`;

export const renderUninstalled = (r: UninstallResult): string =>
  r.changed ? `removed the crux hooks of ${r.events.join(', ')} from ${r.settings}` : `no crux hooks in ${r.settings}; nothing changed`;
