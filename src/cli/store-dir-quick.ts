// The data directory's store in `session get`'s bundle (dist/fast-read.cjs; build.mjs puts this module in the place
// of store-dir.ts there): read one entity through the index, hand everything else on (journal/quick-read.ts).
import { QuickReadDir } from '../journal/quick-read';
import type { OpenDirStore } from './store-dir';

export const openDirStore: OpenDirStore = (path) => new QuickReadDir(path);
