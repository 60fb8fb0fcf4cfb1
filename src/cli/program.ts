// The program: global options, and the command groups, each made by its factory when the command line needs it.
import { Command, Option } from 'commander';
import { writeStderr, writeStdout } from '../output/stdout';

export const VERSION = '0.1.0';

type GroupFactory = (wanted?: string) => Command;

/**
 * Every top-level command by name, in the order help lists them; each module is loaded only when its command
 * is invoked (or help or completion lists them all). Add a group: a factory in commands/ and a line here.
 */
const GROUPS: Record<string, () => Promise<GroupFactory>> = {
  session: async () => (await import('./commands/session')).makeSessionCommand,
  case: async () => (await import('./commands/case')).makeCaseCommand,
  handoff: async () => (await import('./commands/handoff')).makeHandoffCommand,
  journal: async () => (await import('./commands/journal')).makeJournalCommand,
  doctor: async () => (await import('./commands/doctor')).makeDoctorCommand,
  completion: async () => (await import('./commands/completion')).makeCompletionCommand,
  mcp: async () => (await import('./commands/mcp')).makeMcpCommand,
  hook: async () => (await import('./commands/hook')).makeHookCommand,
};

// Help and usage text by write(2) too: a closed pipe (`crux --help | head -1`) ends it quietly, not with EPIPE.
const OUTPUT = { writeOut: writeStdout, writeErr: writeStderr, outputError: () => {} };

function makeProgram(): Command {
  return new Command('crux')
    .description("An AI agent's working memory — sessions, cases and handoff packages — in append-only JSONL journals.")
    .version(VERSION, '-V, --version')
    .addOption(new Option('--data-dir <dir>', 'the data directory (env CRUX_DATA_DIR; default $XDG_DATA_HOME/crux or ~/.local/share/crux)'))
    .addOption(new Option('--agent <name>', "the calling agent's identity, for session scoping (env CRUX_AGENT)"))
    .addOption(new Option('--actor <name>', 'who performs the write, recorded with it (env CRUX_ACTOR)'))
    .addOption(new Option('--json', 'machine output: exactly one JSON document on stdout'))
    .addOption(new Option('--now <time>', 'the current time, RFC 3339 (env CRUX_NOW)'))
    .addOption(new Option('-q, --quiet', 'print nothing on success (but the package, state or export a command exists to print)'))
    .addOption(new Option('--color <when>', 'colour: always, never or auto (on a terminal; NO_COLOR, FORCE_COLOR)').choices(['always', 'never', 'auto']))
    .addOption(new Option('--no-color', 'no colour, as --color=never (also NO_COLOR)'))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(OUTPUT);
}

/** The words of the command line that are not options or their values: `session get x` of `--json session get x`. */
function commandWords(program: Command, args: string[]): string[] {
  const takesValue = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]));
  return args.filter((a, i) => !a.startsWith('-') && !(i > 0 && takesValue.has(args[i - 1]!)));
}

/** `crux … hook <client>` (not `hook install`): a lifecycle hook, which never exits 2 (SPEC §10.2). */
export function isLifecycleHook(argv: string[]): boolean {
  const [word, sub] = commandWords(makeProgram(), argv.slice(2));
  return word === 'hook' && sub !== undefined && sub !== 'install';
}

/** The program with what `argv` needs: the named group with its named command, or everything. */
export async function buildProgram(argv: string[]): Promise<Command> {
  const program = makeProgram();
  const [word, sub] = commandWords(program, argv.slice(2));
  // `completion` walks the whole program; help and unknown words need every group's name and description.
  if (word !== undefined && Object.hasOwn(GROUPS, word) && word !== 'completion') program.addCommand((await GROUPS[word]!())(sub));
  else for (const load of Object.values(GROUPS)) program.addCommand((await load())());
  inheritSettings(program);
  return program;
}

/** What `.command()` would have copied from the parent, for commands made on their own and added. */
function inheritSettings(parent: Command): void {
  for (const command of parent.commands) {
    command.copyInheritedSettings(parent);
    inheritSettings(command);
  }
}
