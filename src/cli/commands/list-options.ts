// The options every list takes (--limit, --sort, --no-headers), the parsing of their values at the edge
// (exit 5), and how many rows a list shows when --limit is not given (50 on a terminal, every row elsewhere).
import { Option, type Command } from 'commander';
import { completingWith } from './group';
import type { Orders, SortSpec } from '../../domain/list-window';
import { invalid } from '../../shared/errors';
import { stdoutIsTerminal } from '../../output/terminal';
import { parseCount } from '../parse';

/** The rows a list shows on a terminal when --limit is not given (SPEC §8). */
export const TERMINAL_ROWS = 50;

/** Adds --limit, --sort (with the keys of `orders`; `defaultOrder` names the list's own order) and --no-headers. */
export function addListOptions(command: Command, orders: Orders<any, string>, defaultOrder: string): Command {
  const keys = Object.keys(orders);
  return command
    .option('--limit <n>', `show at most n (after sorting and filtering); 0: all (default: ${TERMINAL_ROWS} on a terminal, all piped and with --json)`)
    .addOption(completingWith(new Option('--sort <key>', `order by ${keys.join(', ')}; -key for descending (default: ${defaultOrder})`), [...keys, ...keys.map((k) => `-${k}`)]))
    .option('--no-headers', 'leave out the header line of the table');
}

/** A repeatable `--status` (comma-separated too) whose values a shell completes. */
export const statusOption = (description: string, statuses: readonly string[]): Option =>
  completingWith(new Option('--status <status>', description).argParser(collect), statuses);

/** `--limit <n>`: a whole number, 0 for every row (undefined). */
export function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = parseCount(raw, '--limit');
  return n === 0 ? undefined : n;
}

/**
 * How many rows a list shows: --limit (0: all); without it, at most TERMINAL_ROWS when a table goes to a
 * terminal, every row piped, with --json and with --quiet (a script's view is never cut unless it asks).
 */
export function listLimit(raw: string | undefined, mode: { json: boolean; quiet: boolean }): number | undefined {
  if (raw !== undefined) return parseLimit(raw);
  return !mode.json && !mode.quiet && stdoutIsTerminal() ? TERMINAL_ROWS : undefined;
}

export function parseSort<K extends string>(raw: string | undefined, orders: Orders<any, K>): SortSpec<K> | undefined {
  if (raw === undefined) return undefined;
  const descending = raw.startsWith('-');
  const key = (descending ? raw.slice(1) : raw) as K;
  if (!Object.hasOwn(orders, key)) throw invalid(`--sort must be one of ${Object.keys(orders).join(', ')} (or -key): ${JSON.stringify(raw)}`);
  return { key, descending };
}

/** A repeatable or comma-separated choice (--status active,archived), each checked against `allowed`. */
export function parseChoices<T extends string>(raw: readonly string[] | undefined, allowed: readonly T[], flag: string): T[] | undefined {
  if (raw === undefined || raw.length === 0) return undefined;
  const values = raw.flatMap((r) => r.split(',')).map((v) => v.trim());
  for (const v of values) if (!(allowed as readonly string[]).includes(v)) throw invalid(`${flag} must be one of ${allowed.join(', ')}: ${JSON.stringify(v)}`);
  return values as T[];
}

/** A repeatable option's values (no default: help shows none). */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];
