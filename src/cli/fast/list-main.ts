// The list's fast path (dist/fast-list.cjs, loaded by bin/crux for `session list` and `ls`): a bundle of its own,
// without commander, the other commands or the case bank's code, with a code cache of its own (README: Start-up). A
// command line it cannot read as commander would (parse.ts) is handed back to bin/crux, which offers it to the next
// bundle, and at last to the full program.
import { startFast } from './start';
import { LIST_COMMANDS } from './list-commands';

/** Whether this bundle took the command line: when it did not, bin/crux offers it to the next. */
export const handled = startFast(LIST_COMMANDS);
