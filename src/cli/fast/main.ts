// The session writes' fast path (dist/fast.cjs, loaded by bin/crux for `session put|close`): a small bundle without
// commander, the get's code (dist/fast-read.cjs), `case record`'s (dist/fast-record.cjs) or the other commands,
// with a code cache of its own (README: Start-up). A command line it cannot read as commander would (parse.ts) is
// handed back to bin/crux, which offers it to the next bundle, and at last to the full program.
import { startFast } from './start';
import { WRITE_COMMANDS } from './commands';

/** Whether this bundle took the command line: when it did not, bin/crux offers it to the next. */
export const handled = startFast(WRITE_COMMANDS);
