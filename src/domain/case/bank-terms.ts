// The case bank's term rows (StoreSpec.terms): each live case's terms and ranking facts, as a database keeps
// them, and a bank of only a query's candidates made from them, which rankCases ranks exactly as the whole bank.
//
// The facts are what ranking and a result ask of a case: reward, created_at, success, its term count (the
// union's size), its reuse count and where its record is (line, length). A candidate's postings carry the same
// packMeta as a snapshot's, computed here from the same facts.
import type { TermEntry, TermHit, TermKeys } from '../../journal/codec/store-spec';
import { hashIds } from '../../journal/derived/bank/bank';
import { CaseBank } from './bank';
import { packMeta, tagMark, type BankColumns } from '../../journal/derived/bank/layout';
import { foldable } from './payload';
import { caseTerms } from './tokenize';

export const CASE_TERMS: TermKeys<CaseBank> = {
  // 2: each tag's mark (layout.ts tagMark) among the terms. 3: success by tag mark counted with the rows (`counted`):
  // rows of 2, which have no counts, are stale (rebuilt by the next write), not damage.
  version: 3,
  entries: (bank, keys) => entriesOf(bank, keys),
  // Success (the third fact) by tag mark: the dashboard's success by tag and a list's total, counted as rows change.
  counted: { fact: 3, prefix: tagMark('').slice(0, 1) },
  fromHits: (terms, hits) => bankOfHits(terms, hits),
};

function* entriesOf(bank: CaseBank, keys: readonly string[] | undefined): Iterable<TermEntry> {
  let inverted: Map<number, string[]> | undefined;
  const slots = keys === undefined ? bank.liveSlots() : keys.flatMap((key) => bank.slotOf(key) ?? []);
  for (const slot of slots) {
    const fields = foldable(bank.bodies.get(slot));
    // A slot without its body (a bank decoded from a snapshot) has its terms in the postings only.
    const terms = fields !== undefined ? [...caseTerms(fields.task, fields.tags), ...fields.marks] : ((inverted ??= invertPostings(bank)).get(slot) ?? []);
    yield { key: bank.idOf(slot), terms: terms.sort(), facts: factsOf(bank, slot) };
  }
}

/** Every slot's terms, from the postings (a pass over all of them: only a rebuild from a snapshot asks). */
function invertPostings(bank: CaseBank): Map<number, string[]> {
  const bySlot = new Map<number, string[]>();
  bank.vocab.forEach((term, id) => {
    const { cached, later } = bank.postingsOf(id);
    for (const slot of [...cached, ...later]) {
      const list = bySlot.get(slot);
      if (list === undefined) bySlot.set(slot, [term]);
      else list.push(term);
    }
  });
  return bySlot;
}

/** A slot's facts as one text: numbers as JavaScript prints them (they read back exactly). */
function factsOf(bank: CaseBank, slot: number): string {
  const at = bank.position(slot);
  return [bank.reward.get(slot), bank.created.get(slot), bank.success.get(slot), bank.reused.get(slot), bank.termCount.get(slot), at.line, at.length].join(' ');
}

/**
 * A bank of exactly `hits` (slot i is hits[i]), its vocabulary the query's `terms`, each term's postings the hits
 * holding it. Its records are where the facts say (a database's position: the offset is the line).
 */
function bankOfHits(terms: readonly string[], hits: readonly TermHit[]): CaseBank {
  const n = hits.length;
  const reward = new Float64Array(n);
  const created = new Float64Array(n);
  const success = new Uint8Array(n);
  const reused = new Float64Array(n);
  const termCount = new Uint32Array(n);
  const recLine = new Uint32Array(n);
  const recLength = new Uint32Array(n);
  const perTerm: number[][] = terms.map(() => []);
  const idStarts = new Uint32Array(n);
  const ids: string[] = [];
  let at = 0;
  hits.forEach((hit, slot) => {
    const [r, c, s, u, t, line, length] = hit.facts.split(' ').map(Number);
    reward[slot] = r!;
    created[slot] = c!;
    success[slot] = s!;
    reused[slot] = u!;
    termCount[slot] = t!;
    recLine[slot] = line!;
    recLength[slot] = length!;
    for (const i of hit.has) perTerm[i]?.push(slot);
    idStarts[slot] = at;
    ids.push(hit.key);
    at += UTF8.encode(hit.key).length + 1;
  });
  const postStart = new Uint32Array(terms.length + 1);
  const postSlots: number[] = [];
  const postMeta: number[] = [];
  perTerm.forEach((slots, t) => {
    postStart[t] = postSlots.length;
    for (const slot of slots) {
      postSlots.push(slot);
      postMeta.push(packMeta(reward[slot]!, termCount[slot]!, success[slot] === 1));
    }
  });
  postStart[terms.length] = postSlots.length;
  const columns: BankColumns = {
    idBytes: UTF8.encode(ids.join('\n')),
    idStarts,
    vocab: [...terms],
    reward,
    created,
    success,
    reused,
    termCount,
    recOffset: Float64Array.from(recLine),
    recLength,
    recLine,
    postStart,
    postSlots: Uint32Array.from(postSlots),
    postMeta: Uint16Array.from(postMeta),
    idHash: hashIds(ids),
    liveRecordBytes: 0,
  };
  return new CaseBank(columns);
}

const UTF8 = new TextEncoder();
