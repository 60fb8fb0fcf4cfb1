// The retrieve's fast path (dist/fast-retrieve.cjs, loaded by bin/crux for `case retrieve`): a bundle of its own,
// without commander or the other commands, with a code cache of its own (README: Start-up). A command line it cannot
// read as commander would (parse.ts) is handed back to bin/crux, which offers it to the next bundle, and at last to
// the full program.
import { startFast } from './start';
import { RETRIEVE_COMMANDS } from './retrieve-commands';

/** Whether this bundle took the command line: when it did not, bin/crux offers it to the next. */
export const handled = startFast(RETRIEVE_COMMANDS);
