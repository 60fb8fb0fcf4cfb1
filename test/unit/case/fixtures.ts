// Banks built from hand-written events, as replay would build them.
import { CaseBank } from '../../../src/domain/case/bank';
import { evolveBank } from '../../../src/domain/case/evolve';
import type { JournalRecord } from '../../../src/journal/codec/record';
import type { LinePosition } from '../../../src/journal/codec/line';
import type { SnapshotBody } from '../../../src/journal/codec/store-spec';

export interface CaseSpec {
  id: string;
  task: string;
  tags?: string[];
  reward?: number;
  success?: boolean;
  created?: string;
  reused?: number;
}

export const body = (c: CaseSpec) => ({
  case_id: c.id,
  task: c.task,
  context: null,
  action: `act on ${c.id}`,
  outcome: `outcome of ${c.id}`,
  success: c.success ?? true,
  reward: c.reward ?? 1,
  tags: c.tags ?? [],
  source_receipt: null,
  created_at: c.created ?? '2026-01-01T00:00:00.000Z',
  times_reused: c.reused ?? 0,
});

export type Given = { ev: string; data: unknown };

export const recorded = (c: CaseSpec): Given => ({ ev: 'case.recorded', data: body(c) });

/** Folds events into a fresh bank; each gets a line position as if it were line i+1 of the journal. */
export function bankOf(events: readonly Given[], bank = new CaseBank()): CaseBank {
  for (const { record, at } of recordsOf(events)) evolveBank(bank, record, at);
  return bank;
}

/** The events as records, each at a line position as if it were line i+1 of the journal. */
export function recordsOf(events: readonly Given[]): { record: JournalRecord; at: LinePosition }[] {
  let offset = 0;
  return events.map((e, i) => {
    const record = { v: 1, seq: i + 1, ts: '2026-01-01T00:00:00.000Z', ev: e.ev, data: e.data, p: '', h: '' } as unknown as JournalRecord;
    const length = JSON.stringify(e.data).length + 100;
    const at = { line: i + 1, offset, length };
    offset += length + 1;
    return { record, at };
  });
}

/** A snapshot body held in memory, as the derived layer hands a verified one to the bank's decoder. */
export const bodyOf = (bytes: Uint8Array): SnapshotBody => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { length: buf.length, read: (offset, length) => buf.subarray(offset, offset + length) };
};

/** A small deterministic generator (mulberry32): the same cases from the same seed on both engines. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The tags random cases carry (some of their words are in tasks too: a term is not a tag). */
export const TAGS = ['alpha', 'beta', 'gamma', 'deploy-prod', 'x'];

/** The filters of a limited case list the tests compare with a replay (`{ tags: ['nope'] }`: none holds it). */
export const FILTERS = [
  {},
  { success: false },
  { success: true },
  { tags: ['alpha'] },
  { tags: ['deploy-prod'] },
  { tags: ['beta', 'x'], success: true },
  { tags: ['nope'] },
];
