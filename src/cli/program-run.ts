// The full program: build it, parse a command line, and turn every outcome into one exit code (SPEC §2). The
// entry point (main.ts) runs it for the process; tests run it in-process (test/helpers/run-cli.ts).
import { CommanderError, type Command } from 'commander';
import { CruxError } from '../shared/errors';
import { buildProgram, commandPath, helpAsOption, isLifecycleHook } from './program';
import { closeStores } from './store';
import { cruxErrorOf, failed, outputOutcome } from './outcome';
import { takePassedOver } from './context';
import { setStartedAs } from './started-as';
import { forgetCommits } from '../shared/commit-log';

/** A usage error as crux reports it; its hint names the help of the innermost command the words reached. */
function fromCommander(error: CommanderError, path: readonly string[], options: readonly string[] = []): CruxError | undefined {
  if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code) && error.exitCode === 0) return undefined;
  // A group named without a command has printed its help on stderr.
  if (error.code === 'commander.help') return new CruxError('usage', 'missing command', 'the commands are listed above');
  const message = error.message.replace(/^error: /, '').replace(/\s*\n/g, ' ');
  // `crux version` is `crux --version` misspelt, not `crux session`: an option of that name beats a near command.
  const word = /^unknown command '([^']*)'/.exec(message)?.[1];
  if (word !== undefined && options.includes(`--${word}`)) {
    return new CruxError('usage', `unknown command '${word}' (did you mean \`crux --${word}\`?)`, 'see `crux --help`');
  }
  return new CruxError('usage', message, `see \`${['crux', ...path].join(' ')} --help\``);
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  // An in-process run (the tests') starts from none passed over and nothing committed.
  takePassedOver();
  forgetCommits();
  setStartedAs(argv[1]);
  let program: Command | undefined;
  try {
    program = await buildProgram(argv);
    await program.parseAsync(helpAsOption(program, argv));
    return outputOutcome(json);
  } catch (caught) {
    let error: CruxError | undefined;
    if (caught instanceof CommanderError) {
      error = fromCommander(caught, program === undefined ? [] : commandPath(program, argv), program?.options.map((o) => o.long ?? '') ?? []);
      if (error === undefined) return 0;
    } else error = cruxErrorOf(caught);
    // Claude Code reads exit 2 as "block this action": a hook's usage error is invalid input (5) instead.
    if (error.kind === 'usage' && isLifecycleHook(argv)) error = new CruxError('invalid_input', error.message, error.hint);
    return failed(error, json, takePassedOver());
  } finally {
    // A shared store's connection would keep the process alive.
    await closeStores();
  }
}
