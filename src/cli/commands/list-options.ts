// The options every list takes (--limit, --sort, --no-headers) and the repeatable --status; how many rows a list
// shows when --limit is not given is cli/list-limit.ts's.
import { Option, type Command } from 'commander';
import { completingWith } from './group';
import type { Orders } from '../../domain/list-window';
import { TERMINAL_ROWS } from '../list-limit';

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

/** A repeatable option's values (no default: help shows none). */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
