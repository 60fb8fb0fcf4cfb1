// A row verified on its own (pg-fold.ts rowRecord), as reads by key and history reads by key take it: its own hash,
// an event of the vocabulary whose payload it accepts, or, where asked, the opening snapshot.
import { describe, expect, it } from 'vitest';
import { declareEvents } from '../../../src/journal/codec/store-spec';
import { EMPTY_HEAD, encodeRecords } from '../../../src/journal/codec/record';
import { SNAPSHOT_EVENT } from '../../../src/journal/codec/verify';
import { rowRecord } from '../../../src/journal/pg/pg-fold';

const { vocabulary } = declareEvents<{ 'item.put': { id: string } }>({
  'item.put': (data) => (typeof data.id === 'string' ? { id: data.id } : 'id is not a string'),
});
const row = (ev: string, data: unknown) => encodeRecords(EMPTY_HEAD, [{ ev, data }], '2026-12-01T00:00:00Z').text.trimEnd();

describe('rowRecord', () => {
  it('takes a row whose hash verifies, of an event of the vocabulary whose payload parses', () => {
    expect(rowRecord(row('item.put', { id: 'a' }), vocabulary)?.data).toEqual({ id: 'a' });
  });

  it('refuses a row edited after it was hashed, an unknown event, and a payload its event does not parse', () => {
    expect(rowRecord(row('item.put', { id: 'a' }).replace('"a"', '"b"'), vocabulary)).toBeUndefined();
    expect(rowRecord(row('item.gone', { id: 'a' }), vocabulary)).toBeUndefined();
    expect(rowRecord(row('item.put', { id: 1 }), vocabulary)).toBeUndefined();
    expect(rowRecord('not json', vocabulary)).toBeUndefined();
  });

  it('takes the opening snapshot only where asked', () => {
    const snapshot = row(SNAPSHOT_EVENT, { live_records: 0 });
    expect(rowRecord(snapshot, vocabulary)).toBeUndefined();
    expect(rowRecord(snapshot, vocabulary, { snapshot: true })?.ev).toBe(SNAPSHOT_EVENT);
  });
});
