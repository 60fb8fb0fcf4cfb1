// The system tools some suites use besides Node and npm. CI installs them all (.ci/run) and sets
// CRUX_REQUIRE_TOOLS=1, where a missing one is a failure; elsewhere the tests that need one are skipped, with the
// reason in their title, and the run says once, in one line, what to install (tools-setup.ts).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Each tool, with the Debian package that installs it. */
export const TOOLS = {
  b3sum: 'b3sum',
  groff: 'groff-base',
  man: 'man-db',
  strace: 'strace',
  tmux: 'tmux',
  zsh: 'zsh',
} as const;
export type Tool = keyof typeof TOOLS;

/** True under CRUX_REQUIRE_TOOLS=1 (CI): a missing tool fails the run instead of skipping. */
export const toolsRequired = (env: NodeJS.ProcessEnv = process.env): boolean => env.CRUX_REQUIRE_TOOLS === '1';

/** Whether `tool` is an executable file in one of PATH's directories. */
export function onPath(tool: string, path = process.env.PATH ?? ''): boolean {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, tool), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** The tools of `tools` that PATH does not have. */
export const missingTools = (tools: readonly Tool[] = Object.keys(TOOLS) as Tool[], path?: string): Tool[] => tools.filter((t) => !onPath(t, path));

/** The one line that says what to install for `missing` (Debian's packages, as .ci/run installs them). */
export const installLine = (missing: readonly Tool[]): string => `apt-get install -y ${[...new Set(missing.map((t) => TOOLS[t]))].join(' ')}`;

/**
 * Why a test that needs `tools` cannot run here ("no strace (apt-get install -y strace)"), or undefined when it can.
 * Under CRUX_REQUIRE_TOOLS=1 a missing tool throws instead: the suite fails, never skips.
 */
export function toolsSkipReason(...tools: Tool[]): string | undefined {
  const missing = missingTools(tools);
  if (missing.length === 0) return undefined;
  const why = `no ${missing.join(', ')} (${installLine(missing)})`;
  if (toolsRequired()) throw new Error(`CRUX_REQUIRE_TOOLS=1 but ${why}`);
  return why;
}

/** A test title with the reason it is skipped, when it is. */
export const titled = (title: string, skip: string | undefined): string => (skip === undefined ? title : `${title} (skipped: ${skip})`);
