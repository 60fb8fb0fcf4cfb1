// What a case is, and how raw input (flags, a JSON object, an import line) becomes a valid one.
import { invalid } from '../../shared/errors';
import { parseCaseId, type CaseId } from '../../shared/ids';
import { keptText } from '../../shared/free-text';
import { formatTime, parseTime, type Instant } from '../../shared/time';

/** Limits on what one case may hold; over a limit is a clear refusal (exit 5), never a truncation. */
export const MAX_TEXT_BYTES = 64 * 1024;
export const MAX_TAGS = 64;
const MAX_TAG_BYTES = 1024;

/** The fields a caller supplies when recording; everything else is decided by crux. */
const RECORD_FIELDS = ['task', 'context', 'action', 'outcome', 'success', 'reward', 'tags', 'source_receipt'] as const;
/** An import line may also carry what export prints. */
const IMPORT_FIELDS = [...RECORD_FIELDS, 'case_id', 'created_at', 'times_reused'] as const;

export interface CaseDraft {
  readonly task: string;
  readonly context: string | null;
  readonly action: string;
  readonly outcome: string;
  readonly success: boolean;
  readonly reward: number;
  readonly tags: readonly string[];
  readonly source_receipt: string | null;
}

/** A case as every command shows it (SPEC §5, §8: `C`): what was recorded, and what crux decided. */
export interface Case extends CaseDraft {
  readonly case_id: CaseId;
  readonly created_at: string;
  readonly times_reused: number;
}

/** Raw values from flags (strings) or JSON (any type): validated in one place. */
export interface RawCaseInput {
  task?: unknown;
  context?: unknown;
  action?: unknown;
  outcome?: unknown;
  success?: unknown;
  reward?: unknown;
  tags?: unknown;
  source_receipt?: unknown;
}

function text(field: string, value: unknown, opts: { required: boolean; maxBytes?: number }): string | null {
  if (value === undefined || value === null) {
    if (opts.required) throw invalid(`${field} is required`);
    return null;
  }
  if (typeof value !== 'string') throw invalid(`${field} must be a string, not ${describe(value)}`);
  if (opts.required && value.trim() === '') throw invalid(`${field} must not be empty`);
  if (!value.isWellFormed()) throw invalid(`${field} is not well-formed Unicode (a lone surrogate)`);
  const max = opts.maxBytes ?? MAX_TEXT_BYTES;
  const bytes = Buffer.byteLength(value);
  if (bytes > max) throw invalid(`${field} is ${bytes} bytes, over the limit of ${max} bytes`);
  return keptText(value);
}

const describe = (value: unknown) => (Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`);

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A reward from a flag or JSON: a finite number, clamped to [0, 1] (SPEC §5). */
export function parseReward(value: unknown): number {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && DECIMAL.test(value.trim())) n = Number(value.trim());
  else
    throw invalid(
      `reward must be a number, not ${typeof value === 'string' ? JSON.stringify(value) : describe(value)}`,
      'e.g. --reward 0.8; values outside [0,1] are clamped',
    );
  if (!Number.isFinite(n)) throw invalid(`reward must be a finite number, not ${String(value)}`);
  // Clamping also turns -0 into 0, so that the stored value prints as 0.
  return n <= 0 ? 0 : Math.min(n, 1);
}

function tags(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(`tags must be an array of strings, not ${describe(value)}`);
  if (value.length > MAX_TAGS) throw invalid(`${value.length} tags, over the limit of ${MAX_TAGS}`);
  return value.map((tag, i) => text(`tags[${i}]`, tag, { required: false, maxBytes: MAX_TAG_BYTES }) ?? '');
}

/** Validates and scrubs one case's caller-supplied fields; defaults: success true, reward 1.0, no tags. */
export function parseCaseDraft(raw: RawCaseInput): CaseDraft {
  if (raw.success !== undefined && typeof raw.success !== 'boolean') {
    throw invalid(`success must be true or false, not ${describe(raw.success)}`);
  }
  return {
    task: text('task', raw.task, { required: true })!,
    context: text('context', raw.context, { required: false }),
    action: text('action', raw.action, { required: true })!,
    outcome: text('outcome', raw.outcome, { required: true })!,
    success: raw.success ?? true,
    reward: raw.reward === undefined ? 1 : parseReward(raw.reward),
    tags: tags(raw.tags),
    source_receipt: text('source_receipt', raw.source_receipt, { required: false }),
  };
}

function checkKeys(value: unknown, allowed: readonly string[], what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${what} must be a JSON object, not ${describe(value)}`);
  }
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw invalid(
      `${what} has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}`,
      `known fields: ${allowed.join(', ')}`,
    );
  }
  return value as Record<string, unknown>;
}

/** `case record --stdin`: one JSON object with the caller-supplied fields. */
export function parseRecordObject(value: unknown): CaseDraft {
  return parseCaseDraft(checkKeys(value, RECORD_FIELDS, 'the case'));
}

/** `case record --stdin`: the text of one JSON object. */
export function parseRecordJson(text: string): CaseDraft {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(`standard input is not valid JSON (${(error as Error).message})`, 'give one case object');
  }
  return parseRecordObject(value);
}

/** One import line: a case object; only task, action and outcome are required. */
export function parseImportObject(value: unknown, newCaseId: () => CaseId, now: Instant): Case {
  const obj = checkKeys(value, IMPORT_FIELDS, 'the case');
  const draft = parseCaseDraft(obj);
  const { case_id, created_at, times_reused } = obj;
  if (case_id !== undefined && case_id !== null && typeof case_id !== 'string') throw invalid(`case_id must be a string, not ${describe(case_id)}`);
  if (created_at !== undefined && created_at !== null && typeof created_at !== 'string')
    throw invalid(`created_at must be an RFC 3339 string, not ${describe(created_at)}`);
  if (times_reused !== undefined && times_reused !== null && !(Number.isSafeInteger(times_reused) && (times_reused as number) >= 0)) {
    throw invalid(`times_reused must be a non-negative integer, not ${JSON.stringify(times_reused)}`);
  }
  return {
    case_id: case_id == null ? newCaseId() : parseCaseId(case_id),
    ...draft,
    created_at: formatTime(created_at == null ? now : parseTime(created_at, 'created_at')),
    times_reused: (times_reused as number | null | undefined) ?? 0,
  };
}

/** A new case from a draft: the id and the time come from the caller. */
export const newCase = (draft: CaseDraft, caseId: CaseId, now: Instant): Case => ({
  case_id: caseId,
  ...draft,
  created_at: formatTime(now),
  times_reused: 0,
});
