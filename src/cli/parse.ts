// Parsing option values at the edge: each refusal is an invalid-input error (exit 5) naming the option.
import { invalid } from '../shared/errors';

/** A non-negative integer (token counts, limits). */
export function parseCount(raw: string, what: string): number {
  if (!/^\d+$/.test(raw.trim())) throw invalid(`${what} must be a whole number ≥ 0: ${JSON.stringify(raw)}`);
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n)) throw invalid(`${what} is too large: ${raw}`);
  return n;
}

/** A finite decimal number. */
export function parseNumber(raw: string, what: string): number {
  const text = raw.trim();
  const n = text === '' ? Number.NaN : Number(text);
  if (!Number.isFinite(n)) throw invalid(`${what} must be a number: ${JSON.stringify(raw)}`);
  return n;
}

/** Reads an integer setting from the environment, or the default. */
export function envCount(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : parseCount(raw, name);
}
