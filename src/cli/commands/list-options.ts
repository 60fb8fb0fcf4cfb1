// The options every list takes (--limit, --sort) and the parsing of their values at the edge (exit 5).
import { Option, type Command } from 'commander';
import { completingWith } from './group';
import type { Orders, SortSpec } from '../../domain/list-window';
import { invalid } from '../../shared/errors';
import { parseCount } from '../parse';

/** Adds --limit and --sort (with the keys of `orders`; `default` names the list's own order). */
export function addListOptions(command: Command, orders: Orders<any, string>, defaultOrder: string): Command {
  const keys = Object.keys(orders);
  return command
    .option('--limit <n>', 'show at most this many (after sorting and filtering)')
    .addOption(completingWith(new Option('--sort <key>', `order by ${keys.join(', ')}; -key for descending (default: ${defaultOrder})`), [...keys, ...keys.map((k) => `-${k}`)]));
}

/** A repeatable `--status` (comma-separated too) whose values a shell completes. */
export const statusOption = (description: string, statuses: readonly string[]): Option =>
  completingWith(new Option('--status <status>', description).argParser(collect), statuses);

export function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = parseCount(raw, '--limit');
  if (n < 1) throw invalid(`--limit must be at least 1: ${JSON.stringify(raw)}`, 'leave it out to show every entry');
  return n;
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
