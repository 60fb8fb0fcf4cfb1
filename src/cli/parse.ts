// Parsing option values at the edge: each refusal is an invalid-input error (exit 5) naming the option.
import { invalid } from '../shared/errors';
import { parseDuration } from '../shared/time';
import type { Orders, SortSpec } from '../domain/list-window';

/** A non-negative integer (token counts, limits). */
export function parseCount(raw: string, what: string): number {
  if (!/^\d+$/.test(raw.trim())) throw invalid(`${what} must be a whole number ≥ 0: ${JSON.stringify(raw)}`);
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n)) throw invalid(`${what} is too large: ${raw}`);
  return n;
}

/** A lifetime such as --ttl: a duration longer than zero (a zero lifetime is a typo, not a request). */
export function parsePositiveDuration(raw: string, what: string, hint = 'write it as 90s, 15m, 2h or 7d'): number {
  const ms = parseDuration(raw, what);
  if (ms <= 0) throw invalid(`${what} must be longer than zero: ${JSON.stringify(raw)}`, hint);
  return ms;
}

/** Reads an integer setting from the environment, or the default. */
export function envCount(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : parseCount(raw, name);
}

/** `--limit <n>`: a whole number, 0 for every row (undefined). */
export function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = parseCount(raw, '--limit');
  return n === 0 ? undefined : n;
}

/** `--sort <key>` or `-key` (descending), one of the list's orders. */
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

export type Table = Record<string, unknown>;
export const isTable = (v: unknown): v is Table => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);

/** A client's settings file as a JSON object ('' or blank: an empty one); anything else refused, nothing written. */
export function parseJsonObject(text: string, where: string): Table {
  if (text.trim() === '') return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw invalid(`${where} is not valid JSON (${(error as Error).message})`, 'fix or move it; nothing was written');
  }
  if (!isTable(doc)) throw invalid(`${where} is not a JSON object`, 'nothing was written');
  return doc;
}
