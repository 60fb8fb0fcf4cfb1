// The entry point: the full program (program-run.ts) run for this process's command line, its outcome the exit code.
import { exitWith } from './outcome';
import { main } from './program-run';
import { buildHooks } from './build-hooks';

/** Build step (build.mjs, build-hooks.ts): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: readonly string[][]): Promise<number> {
  for (const args of commands) await main(['node', 'crux', ...args]);
  return 0;
}

const warmUpCommands = buildHooks()?.warmUp;
exitWith(warmUpCommands ? warmUp(warmUpCommands) : main(process.argv));
