// How many rows a list shows: --limit, else 50 on a terminal and every row elsewhere. Apart from the list
// options' definitions (commands/list-options.ts), which need commander: the query fast path reads it without.
import { stdoutIsTerminal } from '../output/terminal';
import { parseLimit } from './parse';

/** The rows a list shows on a terminal when --limit is not given (SPEC §8). */
export const TERMINAL_ROWS = 50;

/**
 * How many rows a list shows: --limit (0: all); without it, at most TERMINAL_ROWS when a table goes to a
 * terminal, every row piped, with --json and with --quiet (a script's view is never cut unless it asks).
 */
export function listLimit(raw: string | undefined, mode: { json: boolean; quiet: boolean }): number | undefined {
  if (raw !== undefined) return parseLimit(raw);
  return !mode.json && !mode.quiet && stdoutIsTerminal() ? TERMINAL_ROWS : undefined;
}
