// Every journal in a data directory, in the order `journal check` and `compact` visit them.
import type { StoreSpec } from '../journal/store-spec';
import { SESSION_STORE } from './session/state';

export const ALL_STORES: readonly StoreSpec<any>[] = [SESSION_STORE];
