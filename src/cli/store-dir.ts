// A data directory's store as every bundle opens it but the get's and the list's, which read through
// store-dir-quick.ts instead (build.mjs): cli/store.ts opens one here, so that those can be built without it.
import { DataDir } from '../journal/dir/data-dir';
import type { HistoryRetention } from '../journal/dir/history';
import type { JournalStore, Reporter } from '../journal/core/store-boundary';

export type OpenDirStore = (path: string, reporter: Reporter, lockTimeoutMs: number, history?: HistoryRetention) => JournalStore;

export const openDirStore: OpenDirStore = (path, reporter, lockTimeoutMs, history) => new DataDir(path, reporter, lockTimeoutMs, history);
