// The writes' fast path (dist/fast.cjs, loaded by bin/crux for `session put|close` and `case record`): a small
// bundle without commander, the get's code (dist/fast-read.cjs) or the other commands, with a code cache of its
// own (README: Start-up). A command line it cannot read as commander would (parse.ts) is handed back to bin/crux,
// which runs the full program (dist/crux.cjs) on it: nothing has been read or written by then.
import { startFast } from './start';
import { WRITE_COMMANDS } from './commands';

/** Whether this bundle took the command line: when it did not, bin/crux runs the full program on it. */
export const handled = startFast(WRITE_COMMANDS);
