// The data directory's store in the get's and the list's bundles (dist/fast-read.cjs, dist/fast-list.cjs; build.mjs
// puts this module in the place of store-dir.ts there): read through the index, or replay a store that needs no
// writing, and hand everything else on (journal/dir/quick-read.ts).
import { QuickReadDir } from '../journal/dir/quick-read';
import type { OpenDirStore } from './store-dir';

export const openDirStore: OpenDirStore = (path) => new QuickReadDir(path);
