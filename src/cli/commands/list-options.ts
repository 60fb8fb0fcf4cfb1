// The options every list takes (--limit, --sort, --no-headers), the parsing of their values at the edge
// (exit 5), and how many rows a list shows when --limit is not given (50 on a terminal, every row elsewhere).
import { Option, type Command } from 'commander';
import { completingWith } from './group';
import type { Orders } from '../../domain/list-window';
import { stdoutIsTerminal } from '../../output/terminal';
import { parseLimit } from '../parse';

/** The rows a list shows on a terminal when --limit is not given (SPEC §8). */
export const TERMINAL_ROWS = 50;

/** Adds --limit, --sort (with the keys of `orders`; `defaultOrder` names the list's own order) and --no-headers. */
export function addListOptions(command: Command, orders: Orders<any, string>, defaultOrder: string): Command {
  const keys = Object.keys(orders);
  return command
    .option('--limit <n>', `show at most n (after sorting and filtering); 0: all (default: ${TERMINAL_ROWS} on a terminal, all piped and with --json)`)
    .addOption(
      completingWith(new Option('--sort <key>', `order by ${keys.join(', ')}; -key for descending (default: ${defaultOrder})`), [
        ...keys,
        ...keys.map((k) => `-${k}`),
      ]),
    )
    .option('--no-headers', 'leave out the header line of the table');
}

/** A repeatable `--status` (comma-separated too) whose values a shell completes. */
export const statusOption = (description: string, statuses: readonly string[]): Option =>
  completingWith(new Option('--status <status>', description).argParser(collect), statuses);

/**
 * How many rows a list shows: --limit (0: all); without it, at most TERMINAL_ROWS when a table goes to a
 * terminal, every row piped, with --json and with --quiet (a script's view is never cut unless it asks).
 */
export function listLimit(raw: string | undefined, mode: { json: boolean; quiet: boolean }): number | undefined {
  if (raw !== undefined) return parseLimit(raw);
  return !mode.json && !mode.quiet && stdoutIsTerminal() ? TERMINAL_ROWS : undefined;
}

/** A repeatable option's values (no default: help shows none). */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
