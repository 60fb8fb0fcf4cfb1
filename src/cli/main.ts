// The entry point: build the program, parse, and turn every outcome into one exit code (SPEC §2).
import { CommanderError } from 'commander';
import { CruxError, errorDocument, EXIT_CODES, hintOf, internalError } from '../shared/errors';
import { writeStderr } from '../output/stdout';
import { buildProgram } from './program';

// C0, DEL, C1 and the Unicode line separators: a message may quote its input (a JSON parser's excerpt of
// random bytes), and the error must stay one line that a terminal prints and does not act on.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const printable = (text: string) => text.replace(UNPRINTABLE, (c) => (c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

function reportError(error: CruxError, json: boolean): void {
  if (json) writeStderr(`${JSON.stringify(errorDocument(error))}\n`);
  else writeStderr(`crux: ${printable(error.message)} (${printable(hintOf(error))})\n`);
}

function fromCommander(error: CommanderError): CruxError | undefined {
  if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code) && error.exitCode === 0) return undefined;
  // A group named without a command has printed its help on stderr.
  if (error.code === 'commander.help') return new CruxError('usage', 'missing command', 'the commands are listed above');
  const message = error.message.replace(/^error: /, '').replace(/\s*\n/g, ' ');
  return new CruxError('usage', message, 'see `crux --help`');
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    await (await buildProgram(argv)).parseAsync(argv);
    return 0;
  } catch (caught) {
    let error: CruxError | undefined;
    if (caught instanceof CruxError) error = caught;
    else if (caught instanceof CommanderError) {
      error = fromCommander(caught);
      if (error === undefined) return 0;
    } else error = internalError(caught, Boolean(process.env.CRUX_DEBUG));
    reportError(error, json);
    return EXIT_CODES[error.kind];
  }
}

/** Build step (see build.mjs): run several commands in one process so V8's code cache covers them all. */
async function warmUp(commands: string[][]): Promise<number> {
  for (const args of commands) await main(['node', 'crux', ...args]);
  return 0;
}

const warmUpCommands = process.env.CRUX_WARM_UP;
(warmUpCommands ? warmUp(JSON.parse(warmUpCommands)) : main(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    writeStderr(`crux: internal error: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
