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
  const words = argv.slice(2).filter((a, i) => !a.startsWith('-') && !VALUE_OPTIONS.has(argv[i + 1]!));
  const [word, sub] = words;
  // `completion` walks the whole program, so it needs every group.
  if (word !== undefined && word in GROUPS && word !== 'completion') await registerGroup(program, word, sub);
  else for (const name of Object.keys(GROUPS)) (await GROUPS[name]!()).register(program);
  for (const command of program.commands) inheritSettings(command);
}

/**
 * Registers one group, building only the subcommand named on the command line (building all of a group's
 * commands and options costs ~1.5 ms of a 40 ms `session get`). When that word is not a subcommand's name
 * (an alias, `help`, a typo), the group is built whole, so help, aliases and suggestions are unchanged.
 */
async function registerGroup(program: Command, name: string, sub: string | undefined): Promise<void> {
  const group = await GROUPS[name]!();
  if (sub !== undefined) {
    group.register(onlySubcommand(program, sub));
    const built = program.commands.find((c) => c.name() === name);
    if (built?.commands.some((c) => c.name() === sub)) return;
    if (built !== undefined) (program.commands as Command[]).splice(program.commands.indexOf(built), 1);
  }
  group.register(program);
}

/** A view of `program` whose groups build only the subcommand `sub`; every other one goes to a sink. */
function onlySubcommand(program: Command, sub: string): Command {
  const sink: any = new Proxy(() => sink, { get: () => sink, apply: () => sink });
  const viewOf = (group: Command): Command => {
    const view: Command = new Proxy(group, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop === 'command') {
          return (spec: string, ...rest: unknown[]) => (spec.split(' ')[0] === sub ? (target.command as any)(spec, ...rest) : sink);
        }
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result === target ? view : result;
        };
      },
    });
    return view;
  };
  return new Proxy(program, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'command') return (spec: string, ...rest: unknown[]) => viewOf((target.command as any)(spec, ...rest));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const VALUE_OPTIONS = new Set(['--data-dir', '--agent', '--actor', '--now']);

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
  const message = error.message.replace(/^error: /, '').replace(/\s*\n/g, ' ');
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
