// The get's fast path (dist/fast-read.cjs, loaded by bin/crux for `session get`): the smallest bundle, without the
// writes' code (dist/fast.cjs, dist/fast-record.cjs), the queries' (dist/fast-list.cjs, dist/fast-retrieve.cjs) or
// commander, with a code cache of its own (README: Start-up). A command line it cannot read as commander would
// (parse.ts) is handed back to bin/crux, which offers it to the next bundle, and at last to the full program.
import { startFast } from './start';
import { READ_COMMANDS } from './read-commands';

/** Whether this bundle took the command line: when it did not, bin/crux offers it to the next. */
export const handled = startFast(READ_COMMANDS);
