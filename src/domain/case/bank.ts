// The case bank: the folded state of cases.jsonl (its storage, columns and postings, in journal/derived/bank/),
// with the text of the records this process read. A case's text fields stay where they were written: in memory
// when this process replayed the record, else at the record's journal position (see `position`).
import type { JournalRecord } from '../../journal/codec/record';
import type { LinePosition } from '../../journal/codec/scan';
import { unhandledEvent, type SnapshotBody } from '../../journal/codec/store-spec';
import { Bank } from '../../journal/derived/bank/bank';
import { decodeBank } from '../../journal/derived/bank/codec';
import type { BankEvent, BankRules } from '../../journal/derived/bank/stream';
import { acceptedCaseEvent } from './events';
import { foldable, type CaseBody } from './payload';
import { caseTerms } from './tokenize';

export class CaseBank extends Bank {
  /** Bodies of records this process read; a slot without one is read at its position. */
  readonly bodies = new Map<number, CaseBody>();

  /** Adds (or replaces) a case from a recorded/imported payload; a malformed payload is skipped. */
  put(body: CaseBody, at: LinePosition): void {
    const fields = foldable(body);
    if (fields === undefined) return;
    this.bodies.set(this.add(fields, caseTerms(fields.task, fields.tags), at), body);
  }

  override remove(id: string): number | undefined {
    const slot = super.remove(id);
    if (slot !== undefined) this.bodies.delete(slot);
    return slot;
  }
}

/** The bank a snapshot body holds (see decodeBank), or undefined. */
export const decodeCaseBank = (body: SnapshotBody): CaseBank | undefined => decodeBank(body, (columns) => new CaseBank(columns));

/** The case journal as the bank's storage reads it (a streamed build: journal/derived/bank/stream.ts). */
export const CASE_BANK_RULES: BankRules = {
  eventOf(record: JournalRecord): BankEvent | undefined {
    const event = acceptedCaseEvent(record);
    if (event === undefined) return undefined;
    switch (event.ev) {
      case 'case.recorded':
      case 'case.imported': {
        const facts = foldable(event.data);
        return facts === undefined ? undefined : { kind: 'put', facts, terms: caseTerms(facts.task, facts.tags) };
      }
      case 'case.reused':
        return { kind: 'reused', id: event.data.case_id, count: event.data.times_reused };
      case 'case.deleted':
        return { kind: 'deleted', id: event.data.case_id };
      default:
        return unhandledEvent(event);
    }
  },
};
