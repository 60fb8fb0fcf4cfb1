// The case journal's events: a closed union, one payload type per name; the vocabulary is derived from it
// and every payload is parsed once, when a record is read (one that does not parse is a bad line).
import type { JournalRecord } from '../../journal/codec/record';
import { declareEvents, type DraftOf, type EventOf } from '../../journal/codec/store-spec';
import { isFoldableCase, type CaseBody } from './payload';
import type { Case } from './case';

/**
 * Payloads carry resulting values, never deltas, so replaying a record twice changes nothing:
 * recorded/imported carry the whole case (an existing case_id is replaced), reused the new count.
 */
export interface CaseEventMap {
  'case.recorded': Case;
  'case.imported': Case;
  'case.reused': { readonly case_id: string; readonly times_reused: number };
  'case.deleted': { readonly case_id: string };
}
export type CaseDraftEvent = DraftOf<CaseEventMap>;

export const CASE_EVENTS = {
  recorded: 'case.recorded',
  imported: 'case.imported',
  reused: 'case.reused',
  deleted: 'case.deleted',
} as const satisfies Record<string, keyof CaseEventMap>;

const wholeCase = (d: CaseBody): Case | string =>
  isFoldableCase(d) ? (d as unknown as Case) : 'not a whole case (case_id, task, action, outcome, reward, success, created_at)';

const CASES = declareEvents<CaseEventMap>({
  'case.recorded': wholeCase,
  'case.imported': wholeCase,
  'case.reused': (d) =>
    typeof d.case_id === 'string' && Number.isSafeInteger(d.times_reused) && d.times_reused >= 0
      ? { case_id: d.case_id, times_reused: d.times_reused }
      : 'no case_id and count',
  'case.deleted': (d) => (typeof d.case_id === 'string' ? { case_id: d.case_id } : 'no case_id'),
});

export const CASE_VOCABULARY = CASES.vocabulary;
export const parseCaseEvent = CASES.parse;

/**
 * A record a verifying scan handed on (ScanPart.keep, SnapshotStream.keep) as its event, without parsing it again,
 * or undefined for one that is not a case event (a compacted journal's `journal.snapshot`): the scan hands on
 * only records whose payload the vocabulary parsed (ChainVerifier), and a parse changes nothing of a payload it
 * accepts but its type. (A streamed rebuild at 1M cases parsed every put three times.)
 */
export const acceptedCaseEvent = (record: JournalRecord): EventOf<CaseEventMap> | undefined =>
  CASE_VOCABULARY.has(record.ev) ? (record as unknown as EventOf<CaseEventMap>) : undefined;
