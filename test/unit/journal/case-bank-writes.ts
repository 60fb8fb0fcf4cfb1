// The case bank's fixtures for the tests of its snapshot's delta and of its rewrite in steps: a store that counts
// the records it folds, single writes of every kind a command makes, and what a read answers, to be compared with
// a replay of the journal alone.
import type { CaseBank } from '../../../src/domain/case/bank';
import { rankCases } from '../../../src/domain/case/rank';
import { CASE_STORE } from '../../../src/domain/case/store';
import type { DataDir } from '../../../src/journal/dir/data-dir';
import type { StoreSpec } from '../../../src/journal/codec/store-spec';
import { body } from '../case/fixtures';

export const TS = '2026-11-29T21:00:00.000Z';
export const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa', 'sigma', 'theta'];
const QUERIES = ['alpha beta', 'gamma', 'omega kappa sigma', 'late', 'theta alpha late', 'base zeta'];

/** The case store, counting the records it folds. */
export function countingStore(): StoreSpec<CaseBank> & { folded: number } {
  const spec = {
    ...CASE_STORE,
    folded: 0,
    evolve(bank: CaseBank, record: any, at: any) {
      spec.folded += 1;
      CASE_STORE.evolve(bank, record, at);
    },
  };
  return spec;
}

export const caseBody = (i: number, task: string, reward = ((i * 37) % 100) / 100) => body({ id: `c_${i}`, task, reward, tags: i % 3 === 0 ? ['late'] : [] });

/**
 * One single write, as `case record`, `case delete` and `--mark-reused` make them: new cases, and replaced,
 * deleted and re-counted ones among the first `base` cases.
 */
export async function writeOne(dir: DataDir, spec: StoreSpec<CaseBank>, i: number, base: number): Promise<void> {
  const kind = i % 5;
  const draft =
    kind === 1
      ? { ev: 'case.recorded', data: caseBody(i % base, `replaced ${WORDS[i % 8]} late`, 0.5) }
      : kind === 2
        ? { ev: 'case.deleted', data: { case_id: `c_${(i * 7) % base}` } }
        : kind === 3
          ? { ev: 'case.reused', data: { case_id: `c_${(i * 11) % base}`, times_reused: i } }
          : { ev: 'case.recorded', data: caseBody(1000 + i, `late ${WORDS[i % 8]} ${WORDS[(i + 2) % 8]} new${i}`) };
  await dir.write(async (tx) => {
    await tx.loadKey(spec, String((draft.data as { case_id: string }).case_id));
    tx.append(spec, [draft as never]);
  }, TS);
}

/** What a read answers: the rankings of QUERIES, the live cases and their reuse counts, the counts. */
export function answers(bank: CaseBank) {
  const ranked = QUERIES.map((text) => rankCases(bank, { text, topK: 10, onlySuccess: false, minSimilarity: 0 }).map((h) => [bank.idOf(h.slot), h.similarity]));
  const live = bank.liveSlots().map((s) => [bank.idOf(s), bank.reused.get(s), bank.reward.get(s)]);
  return { ranked, live, liveCount: bank.liveCount, liveRecordBytes: bank.liveRecordBytes };
}

export const read = (dir: DataDir, spec: StoreSpec<CaseBank>) => dir.readWith(spec, (bank) => answers(bank));
export const replayed = (dir: DataDir) => answers(dir.replay(CASE_STORE, { quiet: true }).state);
