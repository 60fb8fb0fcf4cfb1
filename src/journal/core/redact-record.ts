// `journal redact`'s transform of one record's data (SPEC §7): every secret in its free text replaced by
// `[redacted:KIND]`, and with `states`, in each state document's JSON string values, in place (the state stays
// JSON, every byte outside the strings that held a secret kept). Keys, ids and times are never touched. The
// rewrite path re-encodes and re-chains what this returns, as compaction does.
import { findSecrets, redactSecrets } from '../../shared/secrets';
import type { SecretKind } from '../../shared/secret-rules';

// The members that hold free text, wherever they stand (a record's data, a snapshot's entities, a task record).
const FREE_TEXT = new Set(['task', 'context', 'action', 'outcome', 'reason', 'summary', 'message', 'source_receipt', 'task_record', 'notes']);
const STATE = 'state';

export interface RedactedData {
  readonly data: unknown;
  /** The kinds removed, one entry a secret. */
  readonly kinds: readonly SecretKind[];
}

// A JSON string literal: the text between its quotes, escapes included (a valid document's strings only).
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * A state's JSON text with each string value that held a secret redacted in place: a secret inside one value, and a
 * value that is a secret by the name it is assigned to (`{"password": "…"}`, found in the text as a whole, as
 * `journal check` finds it), the whole value then `[redacted:KIND]`.
 */
function redactStateText(text: string, kinds: SecretKind[]): string {
  const inValues = text.replace(JSON_STRING, (literal) => {
    const value = JSON.parse(literal) as string;
    const found = findSecrets(value);
    if (found.length === 0) return literal;
    for (const s of found) kinds.push(s.kind);
    return JSON.stringify(redactSecrets(value));
  });
  const named = findSecrets(inValues);
  if (named.length === 0) return inValues;
  let out = '';
  let at = 0;
  for (const m of inValues.matchAll(JSON_STRING)) {
    const [start, end] = [m.index, m.index + m[0].length];
    const hit = named.find((s) => s.start >= start && s.end <= end);
    if (hit === undefined) continue;
    kinds.push(hit.kind);
    out += `${inValues.slice(at, start)}${JSON.stringify(`[redacted:${hit.kind}]`)}`;
    at = end;
  }
  return out + inValues.slice(at);
}

function redactText(text: string, kinds: SecretKind[]): string {
  const found = findSecrets(text);
  if (found.length === 0) return text;
  for (const s of found) kinds.push(s.kind);
  return redactSecrets(text);
}

/** Every string under `value`, redacted (a free-text member's whole subtree). */
function redactAll(value: unknown, kinds: SecretKind[]): unknown {
  if (typeof value === 'string') return redactText(value, kinds);
  if (Array.isArray(value)) return value.map((v) => redactAll(v, kinds));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactAll(v, kinds)]));
  return value;
}

function walk(value: unknown, states: boolean, kinds: SecretKind[]): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v, states, kinds));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (FREE_TEXT.has(k)) return [k, redactAll(v, kinds)];
      if (k === STATE && typeof v === 'string') return [k, states ? redactStateText(v, kinds) : v];
      return [k, walk(v, states, kinds)];
    }),
  );
}

/** A record's data with its secrets redacted; the same object when it held none. */
export function redactRecordData(data: unknown, opts: { states: boolean }): RedactedData {
  const kinds: SecretKind[] = [];
  const out = walk(data, opts.states, kinds);
  return { data: kinds.length === 0 ? data : out, kinds };
}

/** Every string under `value` redacted, a removed line's `bytes_b64` (quarantine's removed-lines.jsonl) decoded and redacted as a line. */
function redactEvery(value: unknown, kinds: SecretKind[]): unknown {
  if (typeof value === 'string') return redactText(value, kinds);
  if (Array.isArray(value)) return value.map((v) => redactEvery(v, kinds));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (k !== 'bytes_b64' || typeof v !== 'string') return [k, redactEvery(v, kinds)];
      const line = Buffer.from(v, 'base64').toString('latin1');
      const redacted = redactLine(line, kinds);
      return [k, redacted === line ? v : Buffer.from(redacted, 'latin1').toString('base64')];
    }),
  );
}

/**
 * One line of a quarantined item (latin1: every byte kept): a JSON line with every string redacted (a record's
 * hash then no longer holds: quarantine is kept for what it says, not verified); anything else (a torn tail, a
 * damaged line) redacted as text, or replaced whole when its JSON-unescaped form still holds a secret (a PEM block's
 * escaped newlines in a line cut short).
 */
function redactLine(line: string, kinds: SecretKind[]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    const text = redactText(line, kinds);
    const unescaped = text.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    const hidden = findSecrets(unescaped);
    if (hidden.length === 0) return text;
    for (const s of hidden) kinds.push(s.kind);
    return `[redacted:${[...new Set(hidden.map((s) => s.kind))].join(',')}: a damaged line that held a secret]`;
  }
  const before = kinds.length;
  const out = redactEvery(parsed, kinds);
  return kinds.length === before ? line : JSON.stringify(out);
}

/** A quarantined item's bytes with every secret redacted, line by line (undefined when it held none). */
export function redactQuarantined(bytes: Uint8Array): RedactedBytes | undefined {
  const text = Buffer.from(bytes).toString('latin1');
  const kinds: SecretKind[] = [];
  const out = text
    .split('\n')
    .map((line) => redactLine(line, kinds))
    .join('\n');
  return kinds.length === 0 ? undefined : { bytes: Buffer.from(out, 'latin1'), kinds };
}

export interface RedactedBytes {
  readonly bytes: Buffer;
  readonly kinds: readonly SecretKind[];
}
