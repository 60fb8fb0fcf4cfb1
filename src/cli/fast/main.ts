// The fast path's entry (dist/fast.cjs, loaded by bin/crux for `session get|put|close` and `case record`): a
// small bundle without commander or the other commands, with a code cache of its own (README: Start-up). The
// command line it cannot read as commander would (parse.ts) is handed back to bin/crux, which runs the full
// program (dist/crux.cjs) on it: nothing has been read or written by then.
import { closeStores } from '../store';
import { cruxErrorOf, exitWith, failed, outputOutcome } from '../outcome';
import { parseFast, type FastParse } from './parse';
import { FAST_COMMANDS } from './commands';

async function run(parsed: FastParse<any>, json: boolean): Promise<number> {
  try {
    await parsed.command.run(parsed.operands, parsed.opts, parsed.globals);
    return outputOutcome(json);
  } catch (caught) {
    return failed(cruxErrorOf(caught), json);
  } finally {
    // A shared store's connection would keep the process alive.
    await closeStores();
  }
}

/** Build step (see build.mjs): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: string[][]): Promise<number> {
  for (const args of commands) {
    const parsed = parseFast(args, FAST_COMMANDS);
    if (parsed === undefined) throw new Error(`not a fast command: ${args.join(' ')}`);
    await run(parsed, args.includes('--json'));
  }
  return 0;
}

const warmUpCommands = process.env.CRUX_WARM_UP;
const parsed = warmUpCommands ? undefined : parseFast(process.argv.slice(2), FAST_COMMANDS);
/** Whether this bundle took the command line: when it did not, bin/crux runs the full program on it. */
export const handled = Boolean(warmUpCommands) || parsed !== undefined;
if (warmUpCommands) exitWith(warmUp(JSON.parse(warmUpCommands)));
else if (parsed !== undefined) exitWith(run(parsed, process.argv.includes('--json')));
