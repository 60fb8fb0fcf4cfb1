// What stdout is: a terminal (box-drawn tables fitted to its width, colour) or a pipe (tab-separated values), and
// whether to colour, from --color, NO_COLOR and FORCE_COLOR. Asked only when human output is rendered.
import { fs } from '../shared/fs';
import type { TableLayout } from './table';
import { stdioInMemory } from './stdout';

export type ColorWhen = 'always' | 'never' | 'auto';

/**
 * `--color=always|never|auto` (`--no-color` is never) wins; then NO_COLOR (set and non-empty: no colour),
 * then FORCE_COLOR (`0` or `false`: no colour, any other value: colour), then colour on a terminal only.
 */
export function wantsColor(when: ColorWhen, env: NodeJS.ProcessEnv, isTerminal: boolean): boolean {
  if (when !== 'auto') return when === 'always';
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return isTerminal;
}

/** COLUMNS when set to a positive number, else the terminal's own width (80 if it cannot be read). */
export function columnsOf(env: NodeJS.ProcessEnv, terminalColumns: number | undefined): number | undefined {
  const fromEnv = env.COLUMNS === undefined ? Number.NaN : Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return terminalColumns !== undefined && terminalColumns > 0 ? terminalColumns : undefined;
}

/** A terminal gets box-drawn tables within its width (COLUMNS first); a pipe tab-separated values, COLUMNS ignored. */
export function layoutFor(isTerminal: boolean, env: NodeJS.ProcessEnv, terminalColumns: number | undefined, headers = true): TableLayout {
  if (!isTerminal) return { box: false, width: undefined, headers };
  return { box: true, width: columnsOf(env, terminalColumns) ?? 80, headers };
}

let devNull: number | undefined;
/**
 * Whether `fd` is a terminal. Only a character device other than /dev/null is asked: node:tty loads node:net
 * (~2 ms of every call), and stdout is a pipe, a file or /dev/null far more often than a terminal.
 */
export function isTerminal(fd: number): boolean {
  // Streams in memory (the program run in-process) are pipes.
  if (fd <= 2 && stdioInMemory() !== undefined) return false;
  let rdev: number;
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isCharacterDevice()) return false;
    rdev = stat.rdev;
  } catch {
    return false;
  }
  try {
    devNull ??= fs.statSync('/dev/null').rdev;
  } catch {
    devNull = -1;
  }
  return rdev !== devNull && (require('node:tty') as typeof import('node:tty')).isatty(fd);
}

export const stdoutIsTerminal = (): boolean => isTerminal(1);

/** The width of the terminal on stdout; reading it costs Node's stream set-up, so only for tables. */
export function terminalColumns(): number | undefined {
  return stdoutIsTerminal() ? process.stdout.columns : undefined;
}
