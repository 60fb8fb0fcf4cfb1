// The case bank's delta (SnapshotCodec.delta): its changes since the snapshot it was decoded from — the cases
// recorded, imported, deleted or re-counted since — as one JSON document, so that a retrieve after hundreds of
// single records applies them as a few arrays instead of verifying, decoding and looking up each record again.
// Applying refuses a document that does not continue this very bank (other counts, ids out of range), whole.
import type { Bank } from './bank';
import type { BankChanges } from './layout';

const MAGIC = 'crux-case-delta';
const VERSION = 1;

/** The bank's changes since its snapshot as bytes; undefined when it cannot tell them (see Bank.changes). */
export function encodeBankDelta(bank: Bank): Uint8Array | undefined {
  const changes = bank.changes();
  return changes === undefined ? undefined : Buffer.from(JSON.stringify({ magic: MAGIC, v: VERSION, ...changes }));
}

/**
 * Continues `bank`, just decoded from its snapshot, with the changes in `bytes`; false (the bank untouched) when
 * they are not a delta of this version that fits it.
 */
export function applyBankDelta(bank: Bank, bytes: Uint8Array): boolean {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return false;
  }
  if (!fits(bank, doc)) return false;
  bank.applyChanges(doc);
  return true;
}

const isWhole = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isFlag = (x: unknown) => x === 0 || x === 1;
const within = (from: number, to: number) => (x: unknown) => isWhole(x) && x >= from && x < to;
const listOf = (x: unknown, n: number | undefined, each: (v: unknown) => boolean): boolean =>
  Array.isArray(x) && (n === undefined || x.length === n) && x.every(each);

/** Whether `d` is a delta document whose every id and count fits `bank` (a snapshot decoded just now). */
function fits(bank: Bank, d: any): d is BankChanges {
  if (d?.magic !== MAGIC || d.v !== VERSION || d.cachedSlots !== bank.slots || d.cachedTerms !== bank.vocab.length) return false;
  if (!listOf(d.ids, undefined, (id) => typeof id === 'string') || !listOf(d.terms, undefined, (t) => typeof t === 'string')) return false;
  const n = d.ids.length as number;
  const slot = within(d.cachedSlots, d.cachedSlots + n);
  const term = within(0, d.cachedTerms + d.terms.length);
  const cached = within(0, d.cachedSlots);
  return (
    listOf(d.alive, n, isFlag) &&
    listOf(d.success, n, isFlag) &&
    [d.reward, d.created, d.reused].every((column) => listOf(column, n, isNumber)) &&
    [d.termCount, d.recOffset, d.recLength, d.recLine].every((column) => listOf(column, n, isWhole)) &&
    listOf(d.postings, undefined, (p) => Array.isArray(p) && p.length === 2 && term(p[0]) && listOf(p[1], undefined, slot)) &&
    new Set(d.postings.map((p: [number, number[]]) => p[0])).size === d.postings.length &&
    listOf(d.killed, undefined, cached) &&
    listOf(d.reusedCached, undefined, (p) => Array.isArray(p) && p.length === 2 && cached(p[0]) && isNumber(p[1])) &&
    isWhole(d.liveCount) &&
    isWhole(d.liveRecordBytes)
  );
}
