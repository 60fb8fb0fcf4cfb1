// The fast path's entry (dist/fast.cjs, loaded by bin/crux for `session get|put|close` and `case record`): a
// small bundle without commander or the other commands, with a code cache of its own (README: Start-up). The
// command line it cannot read as commander would (parse.ts) is handed back to bin/crux, which runs the full
// program (dist/crux.cjs) on it: nothing has been read or written by then.
import { startFast } from './start';
import { FAST_COMMANDS } from './commands';

/** Whether this bundle took the command line: when it did not, bin/crux runs the full program on it. */
export const handled = startFast(FAST_COMMANDS);
