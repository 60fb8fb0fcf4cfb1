// The case bank: the folded state of cases.jsonl, in columns (one slot per case version) so that it is
// compact, fast to rank over, and serializable for a replay cache. A case's text fields stay where they
// are written: in memory when this process replayed the record, else at the record's journal position.
import type { LinePosition } from '../../journal/scan';
import type { JournalRecord } from '../../journal/record';
import { scrubText } from '../../shared/scrub';
import { formatTime } from '../../shared/time';
import type { CaseId } from '../../shared/ids';
import type { Case } from './case';
import { f64, u32, u8 } from './columns';
import { CASE_EVENTS } from './events';
import { caseTerms } from './tokenize';

/** A recorded/imported payload as it sits in the journal (validated when it is folded). */
export type CaseBody = Record<string, unknown>;

export class CaseBank {
  /** Slot → case id. A replaced or deleted case leaves a dead slot behind. */
  readonly ids: string[] = [];
  readonly alive = u8();
  readonly reward = f64();
  /** created_at as epoch milliseconds, for ranking. */
  readonly created = f64();
  readonly success = u8();
  readonly reused = f64();
  /** The slot's terms are termIds[termStart[s] .. termStart[s] + termCount[s]). */
  readonly termStart = u32();
  readonly termCount = u32();
  readonly termIds = u32();
  /** Where the record that carries the slot's fields sits in the journal. */
  readonly recOffset = f64();
  readonly recLength = u32();
  readonly recLine = u32();
  /** Term id → term. */
  readonly vocab: string[] = [];
  /** Bodies of records this process read; a slot without one is fetched by its position. */
  readonly bodies = new Map<number, CaseBody>();
  liveCount = 0;
  liveRecordBytes = 0;
  private slotIndex: Map<string, number> | undefined;
  private vocabIndex: Map<string, number> | undefined;

  /** The live slot of a case id. */
  slotOf(id: string): number | undefined {
    return this.index().get(id);
  }

  // Built on first use: a bank loaded from a cache to answer one query may never need it.
  private index(): Map<string, number> {
    if (this.slotIndex === undefined) {
      this.slotIndex = new Map();
      for (let s = 0; s < this.ids.length; s++) if (this.alive.get(s)) this.slotIndex.set(this.ids[s]!, s);
    }
    return this.slotIndex;
  }

  /** The id of a term, if any case ever had it. */
  termIdOf(term: string): number | undefined {
    // A bank loaded from a cache answers one query: a scan is cheaper than building the map.
    if (this.vocabIndex === undefined) {
      const i = this.vocab.indexOf(term);
      return i === -1 ? undefined : i;
    }
    return this.vocabIndex.get(term);
  }

  private internTerm(term: string): number {
    if (this.vocabIndex === undefined) this.vocabIndex = new Map(this.vocab.map((t, i) => [t, i]));
    let id = this.vocabIndex.get(term);
    if (id === undefined) {
      id = this.vocab.length;
      this.vocab.push(term);
      this.vocabIndex.set(term, id);
    }
    return id;
  }

  /** Adds (or replaces) a case from a recorded/imported payload; a malformed payload is skipped. */
  put(body: CaseBody, at: LinePosition): void {
    const fields = foldable(body);
    if (fields === undefined) return;
    this.remove(fields.id);
    const slot = this.ids.length;
    this.ids.push(fields.id);
    this.alive.push(1);
    this.reward.push(fields.reward);
    this.created.push(fields.created);
    this.success.push(fields.success ? 1 : 0);
    this.reused.push(fields.reused);
    this.termStart.push(this.termIds.length);
    const terms = caseTerms(fields.task, fields.tags);
    this.termCount.push(terms.size);
    for (const term of terms) this.termIds.push(this.internTerm(term));
    this.recOffset.push(at.offset);
    this.recLength.push(at.length);
    this.recLine.push(at.line);
    this.bodies.set(slot, body);
    this.index().set(fields.id, slot);
    this.liveCount += 1;
    this.liveRecordBytes += at.length + 1;
  }

  remove(id: string): void {
    const slot = this.slotOf(id);
    if (slot === undefined) return;
    this.alive.set(slot, 0);
    this.bodies.delete(slot);
    this.index().delete(id);
    this.liveCount -= 1;
    this.liveRecordBytes -= this.recLength.get(slot) + 1;
  }

  setReused(id: string, count: number): void {
    const slot = this.slotOf(id);
    if (slot !== undefined) this.reused.set(slot, count);
  }

  /** Live slots in the order their cases were (last) written. */
  liveSlots(): number[] {
    const slots: number[] = [];
    for (let s = 0; s < this.ids.length; s++) if (this.alive.get(s)) slots.push(s);
    return slots;
  }

  position(slot: number): LinePosition {
    return { line: this.recLine.get(slot), offset: this.recOffset.get(slot), length: this.recLength.get(slot) };
  }

  /** The whole case of a live slot, given its body (the payload of its record). */
  caseOf(slot: number, body: CaseBody): Case {
    return toCase(body, this.reused.get(slot));
  }
}

interface Foldable {
  id: string;
  task: string;
  tags: string[];
  reward: number;
  created: number;
  success: boolean;
  reused: number;
}

function foldable(body: unknown): Foldable | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as CaseBody;
  const { case_id, task, reward, created_at, success, times_reused } = b;
  if (typeof case_id !== 'string' || case_id === '' || case_id.includes('\n')) return undefined;
  if (typeof task !== 'string' || typeof b.action !== 'string' || typeof b.outcome !== 'string') return undefined;
  if (typeof reward !== 'number' || !(reward >= 0 && reward <= 1)) return undefined;
  const created = typeof created_at === 'string' ? Date.parse(created_at) : NaN;
  if (Number.isNaN(created) || typeof success !== 'boolean') return undefined;
  const reused = Number.isSafeInteger(times_reused) && (times_reused as number) >= 0 ? (times_reused as number) : 0;
  return { id: case_id, task, tags: stringTags(b.tags), reward, created, success, reused };
}

const stringTags = (tags: unknown): string[] => (Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : []);
const optionalText = (value: unknown) => (typeof value === 'string' ? scrubText(value) : null);

/** A stored payload as the case it describes; text is scrubbed again on the way out (SPEC §7). */
export function toCase(body: CaseBody, timesReused: number): Case {
  return {
    case_id: body.case_id as CaseId,
    task: scrubText(body.task as string),
    context: optionalText(body.context),
    action: scrubText(body.action as string),
    outcome: scrubText(body.outcome as string),
    success: body.success as boolean,
    reward: body.reward as number,
    tags: stringTags(body.tags).map(scrubText),
    source_receipt: optionalText(body.source_receipt),
    created_at: formatTime(Date.parse(body.created_at as string)),
    times_reused: timesReused,
  };
}

/** Folds one verified record into the bank. Never throws: a payload it cannot use is skipped. */
export function evolveBank(bank: CaseBank, record: JournalRecord, at: LinePosition): void {
  const data = record.data;
  if (data === null || typeof data !== 'object') return;
  switch (record.ev) {
    case CASE_EVENTS.recorded:
    case CASE_EVENTS.imported:
      bank.put(data, at);
      return;
    case CASE_EVENTS.reused:
      if (typeof data.case_id === 'string' && Number.isSafeInteger(data.times_reused) && data.times_reused >= 0) {
        bank.setReused(data.case_id, data.times_reused);
      }
      return;
    case CASE_EVENTS.deleted:
      if (typeof data.case_id === 'string') bank.remove(data.case_id);
      return;
  }
}
