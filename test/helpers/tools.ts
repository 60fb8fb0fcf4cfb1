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

let otherUser: { why: string | undefined } | undefined;

/**
 * Why crux cannot be run here as user nobody (uid 65534), as the permission tests run it: not root, or the tree
 * is out of nobody's reach (a clone in a 0700 directory, as /root is). Undefined when it can; under
 * CRUX_REQUIRE_TOOLS=1 (CI) a reason throws instead: the suite fails, never skips. Asked once a process.
 */
export function otherUserSkipReason(crux: string): string | undefined {
  otherUser ??= { why: otherUserWhy(crux) };
  if (otherUser.why !== undefined && toolsRequired()) throw new Error(`CRUX_REQUIRE_TOOLS=1 but ${otherUser.why}`);
  return otherUser.why;
}

function otherUserWhy(crux: string): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (these tests run crux as another user)';
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  const run = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', crux, '--version'], { encoding: 'utf8', timeout: 20_000 });
  if (run.status === 0) return undefined;
  return `user nobody cannot run ${crux} (a directory above it is closed to others: chmod o+rx it, or clone where others can read)`;
}
