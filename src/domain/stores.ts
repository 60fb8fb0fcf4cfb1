// Every journal in a data directory, in the order `journal check` and `compact` visit them.
import type { StoreSpec } from '../journal/codec/store-spec';
import { CASE_STORE } from './case/store';
import { FACT_STORE } from './handoff/fact-store';
import { HANDOFF_STORE } from './handoff/ledger';
import { SESSION_STORE } from './session/fold';

export const ALL_STORES: readonly StoreSpec<any>[] = [SESSION_STORE, CASE_STORE, HANDOFF_STORE, FACT_STORE];
