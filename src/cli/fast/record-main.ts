// `case record`'s fast path (dist/fast-record.cjs, loaded by bin/crux for `case record`): a bundle without
// commander, the sessions' commands or the queries', with a code cache of its own (README: Start-up). A command
// line it cannot read as commander would (parse.ts) is handed back to bin/crux, which offers it to the next
// bundle, and at last to the full program.
import { startFast } from './start';
import { RECORD_COMMANDS } from './record-commands';

/** Whether this bundle took the command line: when it did not, bin/crux offers it to the next. */
export const handled = startFast(RECORD_COMMANDS);
