// Parsing option values at the edge: each refusal is an invalid-input error (exit 5) naming the option.
import { invalid } from '../shared/errors';
import { parseDuration } from '../shared/time';

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
