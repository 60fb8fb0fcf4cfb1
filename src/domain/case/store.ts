// The case store: commands in, plain results out; replay and appends go through the journal layer.
import { ACTIVITY_TALLY } from '../activity';
import type { JournalStore } from '../../journal/core/store-boundary';
import type { StoreSpec } from '../../journal/codec/store-spec';
import { CruxError, notFound } from '../../shared/errors';
import type { CaseId } from '../../shared/ids';
import type { ImportSummary } from '../import-summary';
import { formatTime, type Instant } from '../../shared/time';
import { CASE_BANK_RULES, CaseBank, decodeCaseBank } from './bank';
import { evolveBank } from './evolve';
import { liveCase, toCase, type CaseBody } from './payload';
import { newCase, type Case, type CaseDraft } from './case';
import { CASE_EVENTS, CASE_VOCABULARY, type CaseDraftEvent, type CaseEventMap } from './events';
import { encodeBank, stepBank } from '../../journal/derived/bank/steps';
import { applyBankDelta, encodeBankDelta } from '../../journal/derived/bank/delta';
import { MAX_TOP_K, rankCases, type RetrieveQuery } from './rank';
import { CASE_SEALED, indexTerms } from './sealed';
import { CASE_TERMS } from './bank-terms';
import { streamBank } from '../../journal/derived/bank/stream';

export const CASE_STORE: StoreSpec<CaseBank> = {
  file: 'cases.jsonl',
  vocabulary: CASE_VOCABULARY,
  initial: () => new CaseBank(),
  evolve: evolveBank,
  // Compaction writes each live case once, as imported, with its current reuse count.
  live: (bank) => bank.liveSlots().map((slot) => ({ ev: CASE_EVENTS.imported, data: caseAt(bank, slot, liveCase) })),
  // Each record concerns one case: show, delete and record read only that case's lines (the key index).
  keyOf: (record) => (typeof record.data?.case_id === 'string' ? record.data.case_id : undefined),
  // Cases recorded per hour, for the ui's activity chart (domain/activity.ts).
  tally: ACTIVITY_TALLY,
  liveBytes: (bank) => bank.liveRecordBytes,
  // A database keeps each live case's terms and ranking facts as a row: retrieve reads its candidates' alone.
  terms: CASE_TERMS,
  // On an encrypted store a case's text lies sealed and its terms as keyed hashes (sealed.ts).
  sealed: CASE_SEALED,
  /**
   * The bank between invocations (the journal layer keeps it in cache/cases.jsonl.state): retrieve over
   * 100k cases decodes columns instead of replaying. A decoded bank holds no case text; results read theirs
   * from the journal (see resultCase), and compaction replays for a bank with bodies. The records after the
   * snapshot are kept folded in its delta (journal/derived/bank/delta.ts).
   */
  snapshot: {
    // 2: the bank's v5 body (tags' marks): a snapshot, delta or build under way of an older crux is not continued.
    version: 2,
    encode: encodeBank,
    decode: decodeCaseBank,
    delta: { encode: encodeBankDelta, apply: applyBankDelta },
    // Rewritten in bounded steps (derived/bank/steps.ts): at 1M cases a whole rewrite is ~150 MB.
    steps: { step: stepBank },
    // Built by streaming after cache/ is lost (derived/bank/stream.ts): a replay of 1M cases held ~1.9 GiB.
    stream: (scratch) => streamBank(CASE_BANK_RULES, scratch),
  },
};

export interface CaseScope {
  readonly dir: JournalStore;
  readonly now: Instant;
  readonly actor?: string | undefined;
}

export interface ScoredCase {
  readonly similarity: number;
  readonly case: Case;
}

export type { ImportSummary } from '../import-summary';

function caseAt(bank: CaseBank, slot: number, as = toCase): Case {
  const body: CaseBody | undefined = bank.bodies.get(slot);
  if (body === undefined) throw new CruxError('internal', `case ${bank.idOf(slot)} has no body in memory`);
  return as(body, bank.reused.get(slot));
}

/**
 * The whole cases of `slots`, in order: the records of those without text in memory read in one go. A bank restored
 * from a replay cache holds no text: a case whose record moved is read through the key index (a few lines, not a
 * replay); the reuse count is the bank's.
 */
export async function resultCases(dir: JournalStore, bank: CaseBank, slots: readonly number[], as = toCase): Promise<Case[]> {
  const unread = slots.filter((slot) => !bank.bodies.has(slot));
  const positions = unread.map((slot) => bank.position(slot));
  const records = unread.length === 0 ? [] : await dir.readAt(CASE_STORE, positions);
  const read = new Map(unread.map((slot, i) => [slot, records[i]]));
  const cases: Case[] = [];
  for (const slot of slots) {
    if (bank.bodies.has(slot)) {
      cases.push(caseAt(bank, slot, as));
      continue;
    }
    const id = bank.idOf(slot);
    const record = read.get(slot);
    if (record?.data?.case_id === id) {
      cases.push(as(record.data, bank.reused.get(slot)));
      continue;
    }
    // The journal was rewritten since the position was taken: the case's own rows, by the key index.
    const own = await dir.readKey(CASE_STORE, id);
    const ownSlot = own.slotOf(id);
    if (ownSlot === undefined) throw new CruxError('internal', `case ${id} is in the cached bank but not in the journal`);
    cases.push({ ...caseAt(own, ownSlot, as), times_reused: bank.reused.get(slot) });
  }
  return cases;
}

const draftOf = <E extends CaseDraftEvent['ev']>(ev: E, data: CaseEventMap[E], actor: string | undefined): CaseDraftEvent =>
  ({ ev, data, ...(actor === undefined ? {} : { actor }) }) as CaseDraftEvent;

const missing = (id: string) => notFound(`no case ${JSON.stringify(id)}`, 'see `crux case list`');

export async function recordCase(scope: CaseScope, draft: CaseDraft, caseId: CaseId): Promise<Case> {
  const created = newCase(draft, caseId, scope.now);
  return scope.dir.write(async (tx) => {
    await tx.loadKey(CASE_STORE, caseId);
    tx.append(CASE_STORE, [draftOf(CASE_EVENTS.recorded, created, scope.actor)]);
    return created;
  }, formatTime(scope.now));
}

/**
 * Records the case `decide` makes, given which of `candidates` the bank has ever held (a deleted one too), in
 * one transaction: a recorder that derives its ids from what it records (a transcript's stretch) records each
 * once, however many processes race. Answers the case, or undefined when `decide` makes none.
 */
export async function recordOnce(
  scope: CaseScope,
  candidates: readonly CaseId[],
  decide: (held: (id: CaseId) => boolean) => { caseId: CaseId; draft: CaseDraft } | undefined,
): Promise<Case | undefined> {
  return scope.dir.write(async (tx) => {
    const bank = await tx.loadKey(CASE_STORE, ...candidates);
    const made = decide((id) => bank.hasHeld(id));
    if (made === undefined || bank.hasHeld(made.caseId)) return undefined;
    const created = newCase(made.draft, made.caseId, scope.now);
    tx.append(CASE_STORE, [draftOf(CASE_EVENTS.recorded, created, scope.actor)]);
    return created;
  }, formatTime(scope.now));
}

/** Whether the bank has held case `id` (live, or deleted since): a look-up by the key index, no lock. */
export async function hasHeldCase(scope: CaseScope, id: CaseId): Promise<boolean> {
  return (await scope.dir.readKey(CASE_STORE, id)).hasHeld(id);
}

/** Imports validated cases in one locked, fsynced append; an existing case_id is replaced. */
export async function importCases(scope: CaseScope, cases: readonly Case[]): Promise<ImportSummary> {
  return scope.dir.write(async (tx) => {
    const bank = await tx.load(CASE_STORE);
    const replaced = cases.filter((c) => bank.slotOf(c.case_id) !== undefined).length;
    const drafts = cases.map((c) => draftOf(CASE_EVENTS.imported, c, scope.actor));
    tx.append(CASE_STORE, drafts);
    return { imported: cases.length, created: cases.length - replaced, replaced };
  }, formatTime(scope.now));
}

/** Ranked matches; with `markReused`, each returned case's reuse count goes up by one, journaled. */
export async function retrieveCases(scope: CaseScope, query: RetrieveQuery, markReused: boolean): Promise<ScoredCase[]> {
  await scope.dir.settleSealMode?.();
  // The bank reads only what ranking needs (its terms' postings, its candidates' numbers) while this runs.
  if (!markReused) return scope.dir.readTerms(CASE_STORE, { terms: [...indexTerms(query.text)] }, (bank) => resultsOf(scope.dir, bank, rankCases(bank, query)));
  return scope.dir.write(async (tx) => {
    const bank = await tx.loadTerms(CASE_STORE, { terms: [...indexTerms(query.text)] });
    const hits = rankCases(bank, query);
    const drafts = hits.map((hit) => draftOf(CASE_EVENTS.reused, { case_id: bank.idOf(hit.slot), times_reused: bank.reused.get(hit.slot) + 1 }, scope.actor));
    tx.append(CASE_STORE, drafts);
    return resultsOf(scope.dir, bank, hits);
  }, formatTime(scope.now));
}

/**
 * The best matches among the cases tagged `tag` (a project). Only cases whose terms hold the tag's words (a
 * look in those terms' postings) are ranked; the text of each hit is read to check the tag itself, and a hit
 * whose task merely says the word is passed over (ranking keeps a margin of them: 4 × top-k, at most MAX_TOP_K).
 */
export async function retrieveTaggedCases(scope: CaseScope, query: RetrieveQuery, tag: string): Promise<ScoredCase[]> {
  await scope.dir.settleSealMode?.();
  const tagTerms = [...indexTerms(tag)];
  return scope.dir.readTerms(CASE_STORE, { terms: [...indexTerms(query.text)], among: tagTerms }, async (bank) => {
    const termIds = tagTerms.map((term) => bank.termIdOf(term));
    if (termIds.some((id) => id === undefined)) return [];
    const postings = termIds.map((id) => bank.postingsOf(id!));
    const among = (slot: number) => postings.every((list) => holds(list.cached, slot) || list.later.includes(slot));
    const results: ScoredCase[] = [];
    for (const hit of rankCases(bank, { ...query, topK: Math.min(MAX_TOP_K, query.topK * 4), among })) {
      if (results.length === query.topK) break;
      const [found] = await resultCases(scope.dir, bank, [hit.slot]);
      if (found!.tags.includes(tag)) results.push({ similarity: hit.similarity, case: found! });
    }
    return results;
  });
}

/** Whether ascending `slots` (a term's cached postings) holds `slot`: a binary search. */
export function holds(slots: Uint32Array, slot: number): boolean {
  let lo = 0;
  let hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid]! < slot) lo = mid + 1;
    else hi = mid;
  }
  return slots[lo] === slot;
}

async function resultsOf(dir: JournalStore, bank: CaseBank, hits: readonly { slot: number; similarity: number }[]): Promise<ScoredCase[]> {
  const slots = hits.map((hit) => hit.slot);
  const cases = await resultCases(dir, bank, slots);
  return hits.map((hit, i) => ({ similarity: hit.similarity, case: cases[i]! }));
}

export async function showCase(scope: CaseScope, id: CaseId): Promise<Case> {
  const bank = await scope.dir.readKey(CASE_STORE, id);
  const slot = bank.slotOf(id);
  if (slot === undefined) throw missing(id);
  return caseAt(bank, slot);
}

/**
 * Every live case, in the order they were (last) written: the order export prints and import restores. `as`
 * liveCase: a sealed case's text as it lies (no key needed), for what counts by plain fields (tags, success).
 */
export async function listCases(scope: CaseScope, as = toCase): Promise<Case[]> {
  const bank = await scope.dir.read(CASE_STORE);
  const slots = bank.liveSlots();
  const cases: Case[] = [];
  // The text of those the bank holds none for is read a batch at a time (one query on PostgreSQL, not one a case).
  for (let i = 0; i < slots.length; i += LIST_BATCH) cases.push(...(await resultCases(scope.dir, bank, slots.slice(i, i + LIST_BATCH), as)));
  return cases;
}

const LIST_BATCH = 1024;

/** The ids of the live cases that start with `prefix`, in the order they were (last) written, at most `max`: from the bank alone. */
export async function caseIdsStartingWith(scope: CaseScope, prefix: string, max: number): Promise<string[]> {
  // A database's term rows, by the line of each case's record (bank-terms.ts factsOf: its sixth fact): a page, not the bank.
  const rows = await scope.dir.readTermRows?.(CASE_STORE, { among: [], prefix, order: [{ fact: 6, descending: false }], offset: 0, limit: max, count: false });
  if (rows !== undefined) return rows.hits.map((hit) => hit.key);
  // The bank as its snapshot reads on demand: the ids' pages as far as the screenful goes.
  return scope.dir.readWith(CASE_STORE, (bank) => {
    const ids: string[] = [];
    for (let slot = 0; slot < bank.slots && ids.length < max; slot++) {
      if (bank.alive.get(slot) !== 1) continue;
      const id = bank.idOf(slot);
      if (id.startsWith(prefix)) ids.push(id);
    }
    return ids;
  });
}

export async function deleteCase(scope: CaseScope, id: CaseId): Promise<{ deleted: CaseId }> {
  return scope.dir.write(async (tx) => {
    const bank = await tx.loadKey(CASE_STORE, id);
    if (bank.slotOf(id) === undefined) throw missing(id);
    tx.append(CASE_STORE, [draftOf(CASE_EVENTS.deleted, { case_id: id }, scope.actor)]);
    return { deleted: id };
  }, formatTime(scope.now));
}
