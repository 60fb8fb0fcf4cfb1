// The entry point: build the program, parse, and turn every outcome into one exit code (SPEC §2).
import { CommanderError, type Command } from 'commander';
import { CruxError, errorDocument, EXIT_CODES, hintOf, internalError } from '../shared/errors';
import { stdoutFailure, writeStderr } from '../output/stdout';
import { committed } from '../shared/commit-log';
import { scrubText } from '../shared/scrub';
import { buildProgram, commandPath, helpAsOption, isLifecycleHook } from './program';
// A message may quote its input (a JSON parser's excerpt of random bytes, an unknown option): the error stays
// one line that a terminal prints as written and does not act on.
import { printableMessage as printable } from '../shared/printable';
import { closeStores } from './store';

function reportError(error: CruxError, json: boolean): void {
  // A message may quote a bad value (`--reward 'https://u:token@h'`): never echo its credentials (SPEC §8).
  if (json) writeStderr(`${JSON.stringify(errorDocument(error))}\n`);
  else writeStderr(`crux: ${printable(scrubText(error.message))} (${printable(scrubText(hintOf(error)))})\n`);
}

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
  let program: Command | undefined;
  try {
    program = await buildProgram(argv);
    await program.parseAsync(helpAsOption(program, argv));
    return outputOutcome(json);
  } catch (caught) {
    let error: CruxError | undefined;
    if (caught instanceof CruxError) error = caught;
    else if (caught instanceof CommanderError) {
      error = fromCommander(caught, program === undefined ? [] : commandPath(program, argv), program?.options.map((o) => o.long ?? '') ?? []);
      if (error === undefined) return 0;
    } else error = internalError(caught, Boolean(process.env.CRUX_DEBUG));
    // Claude Code reads exit 2 as "block this action": a hook's usage error is invalid input (5) instead.
    if (error.kind === 'usage' && isLifecycleHook(argv)) error = new CruxError('invalid_input', error.message, error.hint);
    reportError(error, json);
    return EXIT_CODES[error.kind];
  } finally {
    // A shared store's connection would keep the process alive.
    await closeStores();
  }
}

/**
 * The exit of a command that ran to its end, given what became of its output. A closed pipe on a query is the
 * reader's choice (`crux … | head`): 0, quietly. After a committed write the effect is durable, so whatever
 * became of stdout the exit is 0, with one line on stderr saying what was done (a retrying wrapper must not
 * repeat it). A query whose output hit a full device or an I/O error failed: its kind's code.
 */
function outputOutcome(json: boolean): number {
  const failure = stdoutFailure();
  if (failure === undefined) return 0;
  const done = committed();
  if (done.length > 0) {
    writeStderr(`crux: committed (${done.join('; ')}), but its output could not be written (${failure}): the write is durable, do not repeat it\n`);
    return 0;
  }
  if (failure === 'EPIPE') return 0;
  const error = new CruxError('io_error', `cannot write standard output (${failure})`, 'nothing was changed; send the output where it can be written');
  reportError(error, json);
  return EXIT_CODES[error.kind];
}

/** Build step (see build.mjs): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: string[][]): Promise<number> {
  for (const args of commands) await main(['node', 'crux', ...args]);
  return 0;
}

const warmUpCommands = process.env.CRUX_WARM_UP;
// A command whose work was left waiting on nothing (a promise no one settles) would end the process with 0, an
// acknowledgement of what may never have been committed: until main answers, the exit is an internal error.
let answered = false;
process.once('beforeExit', () => {
  if (answered) return;
  writeStderr('crux: internal error: the command ended without finishing (nothing it did is acknowledged; this is a bug: please report it)\n');
  process.exitCode = 1;
});
(warmUpCommands ? warmUp(JSON.parse(warmUpCommands)) : main(process.argv)).then(
  (code) => {
    answered = true;
    process.exitCode = code;
  },
  (error) => {
    answered = true;
    writeStderr(`crux: internal error: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
