// How one case-journal record changes the bank: the exhaustive fold over the case events.
import { unhandledEvent } from '../../journal/codec/store-spec';
import type { LinePosition } from '../../journal/codec/scan';
import type { JournalRecord } from '../../journal/codec/record';
import type { CaseBank } from './bank';
import type { CaseBody } from './payload';
import { parseCaseEvent } from './events';

/** Folds one record into the bank. Never throws: a payload that does not parse is skipped (reads report it). */
export function evolveBank(bank: CaseBank, record: JournalRecord, at: LinePosition): void {
  const event = parseCaseEvent(record);
  if (typeof event === 'string') return;
  switch (event.ev) {
    case 'case.recorded':
    case 'case.imported':
      bank.put(event.data as unknown as CaseBody, at); // the bank reads the stored fields as they are
      return;
    case 'case.reused':
      bank.setReused(event.data.case_id, event.data.times_reused);
      return;
    case 'case.deleted':
      bank.remove(event.data.case_id);
      return;
    default:
      unhandledEvent(event);
  }
}
