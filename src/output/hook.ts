// Human rendering of `crux hook install`.

export interface InstallResult {
  readonly settings: string;
  readonly changed: boolean;
  readonly events: readonly string[];
  readonly command: string;
}

export const renderInstalled = (r: InstallResult): string =>
  r.changed
    ? `installed \`${r.command}\` for ${r.events.join(', ')} in ${r.settings}`
    : `the crux hooks are already in ${r.settings}; nothing changed`;
