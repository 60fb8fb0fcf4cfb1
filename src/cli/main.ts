// The entry point: build the program, parse, and turn every outcome into one exit code (SPEC §2).
import { Command, CommanderError, Option } from 'commander';
import { CruxError, EXIT_CODES, hintOf } from '../shared/errors';
import { writeStderr, writeStdout } from '../output/stdout';

export const VERSION = '0.1.0';

/** Command groups, each loaded only when invoked (or when help lists them). */
const GROUPS: Record<string, () => Promise<{ register(program: Command): void }>> = {
  session: () => import('./commands/session'),
  case: () => import('./commands/case'),
  handoff: () => import('./commands/handoff'),
  journal: () => import('./commands/journal'),
  doctor: () => import('./commands/doctor'),
  completion: () => import('./commands/completion'),
};

// Help and usage text by write(2) too: a closed pipe (`crux --help | head -1`) ends it quietly, not with EPIPE.
const OUTPUT = { writeOut: writeStdout, writeErr: writeStderr, outputError: () => {} };

export function buildProgram(): Command {
  const program = new Command('crux')
    .description("An AI agent's working memory — sessions, cases and handoff packages — in append-only JSONL journals.")
    .version(VERSION, '-V, --version')
    .addOption(new Option('--data-dir <dir>', 'the data directory (env CRUX_DATA_DIR; default $XDG_DATA_HOME/crux or ~/.local/share/crux)'))
    .addOption(new Option('--agent <name>', "the calling agent's identity, for session scoping (env CRUX_AGENT)"))
    .addOption(new Option('--actor <name>', 'who performs the write, recorded with it (env CRUX_ACTOR)'))
    .addOption(new Option('--json', 'machine output: exactly one JSON document on stdout'))
    .addOption(new Option('--now <time>', 'the current time, RFC 3339 (env CRUX_NOW)'))
    .addOption(new Option('-q, --quiet', 'print nothing on success'))
    .addOption(new Option('--no-color', 'plain output (also NO_COLOR); never colour when stdout is not a TTY'))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(OUTPUT);
  return program;
}

async function registerGroups(program: Command, argv: string[]): Promise<void> {
  // Load only the group named on the command line; load all for help and unknown words.
  const word = argv.slice(2).find((a) => !a.startsWith('-') && !isOptionValue(argv, a));
  // `completion` walks the whole program, so it needs every group.
  const names = word !== undefined && word in GROUPS && word !== 'completion' ? [word] : Object.keys(GROUPS);
  for (const name of names) (await GROUPS[name]!()).register(program);
  for (const sub of program.commands) inheritSettings(sub);
}

const VALUE_OPTIONS = new Set(['--data-dir', '--agent', '--actor', '--now']);
function isOptionValue(argv: string[], word: string): boolean {
  const i = argv.indexOf(word);
  return i > 0 && VALUE_OPTIONS.has(argv[i - 1]!);
}

function inheritSettings(command: Command): void {
  command.exitOverride().configureOutput(OUTPUT).showSuggestionAfterError(true);
  for (const sub of command.commands) inheritSettings(sub);
}

// C0, DEL, C1 and the Unicode line separators: a message may quote its input (a JSON parser's excerpt of
// random bytes), and the error must stay one line that a terminal prints and does not act on.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const printable = (text: string) => text.replace(UNPRINTABLE, (c) => (c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));

function reportError(error: CruxError, json: boolean): void {
  const hint = hintOf(error);
  if (json) {
    writeStderr(`${JSON.stringify({ error: { code: error.exitCode, kind: error.kind, message: error.message, hint } })}\n`);
  } else {
    writeStderr(`crux: ${printable(error.message)} (${printable(hint)})\n`);
  }
}

function fromCommander(error: CommanderError): CruxError | undefined {
  if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code) && error.exitCode === 0) return undefined;
  // A group named without a command has printed its help on stderr.
  if (error.code === 'commander.help') return new CruxError('usage', 'missing command', 'the commands are listed above');
  const message = error.message.replace(/^error: /, '');
  return new CruxError('usage', message, 'see `crux --help`');
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await registerGroups(program, argv);
    await program.parseAsync(argv);
    return 0;
  } catch (caught) {
    let error: CruxError | undefined;
    if (caught instanceof CruxError) error = caught;
    else if (caught instanceof CommanderError) {
      error = fromCommander(caught);
      if (error === undefined) return 0;
    } else {
      const detail = caught instanceof Error ? (process.env.CRUX_DEBUG ? caught.stack : caught.message) : String(caught);
      error = new CruxError('internal', `internal error: ${detail}`, 'this is a bug: please report it with the command you ran; CRUX_DEBUG=1 shows the stack');
    }
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
