// A case as its journal payload holds it: which payloads are whole cases, the fields the bank folds, and the
// case a payload describes (text scrubbed again on the way out, SPEC §7).
import { scrubText } from '../../shared/scrub';
import { asWritten, formatTime } from '../../shared/time';
import type { CaseId } from '../../shared/ids';
import type { Case } from './case';
import { isSealed, openSealed } from '../../journal/codec/cipher';
import { CASES_FILE, foldedTerms } from './sealed';
import { tagMark } from '../../journal/derived/bank/layout';

/** A recorded or imported payload as stored (its fields are checked by `foldable`). */
export type CaseBody = Record<string, unknown>;

export interface Foldable {
  id: string;
  /** The text whose tokens are its terms, with `tags`: a sealed case's are its keyed hashes (sealed.ts). */
  task: string;
  tags: string[];
  reward: number;
  created: number;
  success: boolean;
  reused: number;
  /** Each tag's mark (layout.ts tagMark): the postings count a tag's cases by it. */
  marks: string[];
}

/** Whether a recorded or imported payload is a case the bank can fold. */
export const isFoldableCase = (body: CaseBody): boolean => foldable(body) !== undefined;

export function foldable(body: unknown): Foldable | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as CaseBody;
  const { case_id, task, reward, created_at, success, times_reused } = b;
  if (typeof case_id !== 'string' || case_id === '' || case_id.includes('\n')) return undefined;
  if (typeof task !== 'string' || typeof b.action !== 'string' || typeof b.outcome !== 'string') return undefined;
  if (typeof reward !== 'number' || !(reward >= 0 && reward <= 1)) return undefined;
  // As crux writes every time, read by digits (Date.parse took ~0.5 s of a 1M-case build); any other spelling as Date reads it.
  const created = typeof created_at === 'string' ? (asWritten(created_at) ?? Date.parse(created_at)) : NaN;
  if (Number.isNaN(created) || typeof success !== 'boolean') return undefined;
  const reused = Number.isSafeInteger(times_reused) && (times_reused as number) >= 0 ? (times_reused as number) : 0;
  const tags = stringTags(b.tags);
  return { id: case_id, ...foldedTerms(b, task, tags), reward, created, success, reused, marks: [...new Set(tags)].map(tagMark) };
}

const stringTags = (tags: unknown): string[] => (Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : []);
const optionalText = (value: unknown) => (typeof value === 'string' ? scrubText(value) : null);

/**
 * A stored payload as the case it describes; text is scrubbed again on the way out (SPEC §7). A sealed text is
 * opened with the invocation's key (exit 6 naming the key id without it: a command that shows a case needs it).
 */
export function toCase(body: CaseBody, timesReused: number): Case {
  const place = (field: string) => ({ file: CASES_FILE, entity: String(body.case_id), field });
  const open = (field: string) => {
    const value = body[field];
    return typeof value === 'string' ? openSealed(value, place(field)) : value;
  };
  return {
    case_id: body.case_id as CaseId,
    task: scrubText(open('task') as string),
    context: optionalText(open('context')),
    action: scrubText(open('action') as string),
    outcome: scrubText(open('outcome') as string),
    success: body.success as boolean,
    reward: body.reward as number,
    tags: stringTags(body.tags).map(scrubText),
    source_receipt: optionalText(open('source_receipt')),
    created_at: formatTime(Date.parse(body.created_at as string)),
    times_reused: timesReused,
  };
}

/** A stored payload as compaction restates it: a sealed case as it lies (its text and term hashes carried, no key needed). */
export function liveCase(body: CaseBody, timesReused: number): Case {
  if (!isSealed(body.task)) return toCase(body, timesReused);
  return { ...body, times_reused: timesReused } as unknown as Case;
}
