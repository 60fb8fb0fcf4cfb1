// The optional task record a package carries: who asked, for what, from which sources, judged how, within which limits.
import { invalid } from '../../shared/errors';
import { keptText } from '../../shared/free-text';

/**
 * The daemon's TaskRecord: every field skip-if-empty, so an all-empty record serialises to `{}`.
 * Reading of the field types (the seed names them, not their types): the singular nouns are strings,
 * the plural nouns lists of strings.
 */
export interface TaskRecord {
  readonly requester?: string;
  readonly desired_outcome?: string;
  readonly sources?: readonly string[];
  readonly acceptance_criteria?: readonly string[];
  readonly boundaries?: readonly string[];
  readonly blocker_rule?: string;
}

const TEXT_FIELDS = ['requester', 'desired_outcome', 'blocker_rule'] as const;
const LIST_FIELDS = ['sources', 'acceptance_criteria', 'boundaries'] as const;
/** Serialisation order: the daemon's struct order. */
const TASK_RECORD_FIELDS = ['requester', 'desired_outcome', 'sources', 'acceptance_criteria', 'boundaries', 'blocker_rule'] as const;

type Mutable = { -readonly [K in keyof TaskRecord]: TaskRecord[K] };

/** Validates a task record given as JSON (a --task-file), scrubbing credentials from every text (SPEC §7). */
export function parseTaskRecord(value: unknown, what = 'the task record'): TaskRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(`${what} must be a JSON object`);
  const record: Mutable = {};
  for (const [key, v] of Object.entries(value)) {
    if ((TEXT_FIELDS as readonly string[]).includes(key)) {
      if (v === null) continue;
      if (typeof v !== 'string') throw invalid(`${what}: ${key} must be a string`);
      record[key as (typeof TEXT_FIELDS)[number]] = keptText(v);
    } else if ((LIST_FIELDS as readonly string[]).includes(key)) {
      if (v === null) continue;
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw invalid(`${what}: ${key} must be a list of strings`);
      record[key as (typeof LIST_FIELDS)[number]] = v.map(keptText);
    } else {
      throw invalid(`${what}: unknown field ${JSON.stringify(key)}`, `known fields: ${TASK_RECORD_FIELDS.join(', ')}`);
    }
  }
  return record;
}

/** Lays flags over a record: a text flag replaces, a list flag replaces the list. Texts are scrubbed. */
export function mergeTaskRecord(base: TaskRecord | undefined, flags: TaskRecord): TaskRecord | undefined {
  const given = TASK_RECORD_FIELDS.filter((k) => flags[k] !== undefined);
  if (base === undefined && given.length === 0) return undefined;
  const merged: Mutable = { ...(base ?? {}) };
  for (const k of TEXT_FIELDS) if (flags[k] !== undefined) merged[k] = keptText(flags[k]!);
  for (const k of LIST_FIELDS) if (flags[k] !== undefined) merged[k] = flags[k]!.map(keptText);
  return merged;
}

/** The record's JSON exactly as serde writes it: struct order, empty strings and lists omitted. */
export function encodeTaskRecord(record: TaskRecord): string {
  const parts: string[] = [];
  for (const k of TASK_RECORD_FIELDS) {
    const v = record[k];
    if (v === undefined || v.length === 0) continue;
    parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
  }
  return `{${parts.join(',')}}`;
}
