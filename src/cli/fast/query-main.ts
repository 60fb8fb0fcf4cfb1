// The query fast path's entry (dist/fast-query.cjs, loaded by bin/crux for `session list` and `case retrieve`):
// a bundle of its own, apart from the other fast bundles, so that `session get|put` neither read nor compile the
// list's and the retrieve's code; with a code cache of its own (README: Start-up). A command line it cannot read as
// commander would (parse.ts) is handed back to bin/crux, which runs the full program on it.
import { startFast } from './start';
import { QUERY_COMMANDS } from './query-commands';

/** Whether this bundle took the command line: when it did not, bin/crux runs the full program on it. */
export const handled = startFast(QUERY_COMMANDS);
