// The case journal's vocabulary: every event cases.jsonl may contain, and its payload.
import { declareVocabulary } from '../../journal/store-spec';
import type { Case } from './case';

export const CASE_EVENTS = {
  recorded: 'case.recorded',
  imported: 'case.imported',
  reused: 'case.reused',
  deleted: 'case.deleted',
} as const;

export const CASE_VOCABULARY = declareVocabulary(Object.values(CASE_EVENTS));

/**
 * Payloads carry resulting values, never deltas, so replaying a record twice changes nothing:
 * recorded/imported carry the whole case (an existing case_id is replaced), reused the new count.
 */
export type RecordedData = Case;
export type ImportedData = Case;
export interface ReusedData {
  readonly case_id: string;
  readonly times_reused: number;
}
export interface DeletedData {
  readonly case_id: string;
}
