// A small journal for the store tests: counters put (a reset of the key) and added to.
import { declareVocabulary, type StoreSpec } from '../../../src/journal/codec/store-spec';

export type Counters = Map<string, number>;

export const COUNTERS: StoreSpec<Counters> = {
  file: 'counters.jsonl',
  vocabulary: declareVocabulary(['counter.put', 'counter.added']),
  initial: () => new Map(),
  evolve(state, record) {
    const { id, n } = record.data ?? {};
    if (typeof id !== 'string' || typeof n !== 'number') return;
    state.set(id, record.ev === 'counter.put' ? n : (state.get(id) ?? 0) + n);
  },
  live: (state) => [...state].map(([id, n]) => ({ ev: 'counter.put', data: { id, n } })),
  keyOf: (record) => record.data?.id,
  resets: (record) => record.ev === 'counter.put',
};
