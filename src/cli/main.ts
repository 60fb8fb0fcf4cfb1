// The entry point: the full program (program-run.ts) run for this process's command line, its outcome the exit code.
import { exitWith } from './outcome';
import { main } from './program-run';

/** Build step (see build.mjs): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: string[][]): Promise<number> {
  for (const args of commands) await main(['node', 'crux', ...args]);
  return 0;
}

const warmUpCommands = process.env.CRUX_WARM_UP;
exitWith(warmUpCommands ? warmUp(JSON.parse(warmUpCommands)) : main(process.argv));
