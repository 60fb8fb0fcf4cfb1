// The program: global options, and the command groups, each made by its factory when the command line needs it.
import { Command, Option } from 'commander';
import { writeStderr, writeStdout } from '../output/stdout';
import { VERSION } from './version';
import { HOOK_CLIENT_NAMES } from './hook/clients';

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
  key: async () => (await import('./commands/key')).makeKeyCommand,
  store: async () => (await import('./commands/store')).makeStoreCommand,
  doctor: async () => (await import('./commands/doctor')).makeDoctorCommand,
  completion: async () => (await import('./commands/completion')).makeCompletionCommand,
  mcp: async () => (await import('./commands/mcp')).makeMcpCommand,
  hook: async () => (await import('./commands/hook')).makeHookCommand,
  ui: async () => (await import('./commands/ui')).makeUiCommand,
  // Hidden (a name starting with "__"): what the completion scripts call for ids.
  __complete: async () => (await import('./commands/complete-ids')).makeCompleteIdsCommand,
};

// Help and usage text by write(2) too: a closed pipe (`crux --help | head -1`) ends it quietly, not with EPIPE.
const OUTPUT = { writeOut: writeStdout, writeErr: writeStderr, outputError: () => {} };

const ROOT_EPILOGUE = [
  '',
  'Examples:',
  '  crux session put build-42 \'{"step": 1}\' --ttl 2h',
  '  crux session list',
  '  crux case retrieve rotate the tls certificate',
  '  crux doctor',
  '',
  'Help on one command: crux help <command> [<subcommand>] (crux help session put).',
  'Manual pages: man crux; crux-session, crux-case, crux-handoff, crux-journal,',
  'crux-key, crux-store, crux-mcp, crux-hook, crux-ui; man 5 crux-journal for',
  'the journal format.',
].join('\n');

function makeProgram(): Command {
  return (
    new Command('crux')
      .description("An AI agent's working memory — sessions, cases and handoff packages — in append-only JSONL journals.")
      .version(VERSION, '-V, --version')
      .addOption(new Option('--data-dir <dir>', 'the data directory (env CRUX_DATA_DIR; default $XDG_DATA_HOME/crux or ~/.local/share/crux)'))
      .addOption(
        new Option('--store <url>', 'a shared PostgreSQL store, postgres://user@host/db[?schema=crux], instead of the data directory (env CRUX_STORE)'),
      )
      .addOption(new Option('--key-file <file>', 'the store key, for an encrypted store (env CRUX_KEY_FILE; see crux key new)'))
      .addOption(new Option('--agent <name>', "the calling agent's identity, for session scoping (env CRUX_AGENT)"))
      .addOption(new Option('--actor <name>', 'who performs the write, recorded with it (env CRUX_ACTOR)'))
      .addOption(new Option('--json', 'machine output: exactly one JSON document on stdout'))
      .addOption(new Option('--now <time>', 'the current time, RFC 3339 (env CRUX_NOW)'))
      .addOption(
        new Option(
          '-q, --quiet',
          'print only ids: a list its ids, one a line; a command that creates something the new id (never hiding the package, state or export a command exists to print)',
        ),
      )
      .addOption(new Option('--color <when>', 'colour: always, never or auto (on a terminal; NO_COLOR, FORCE_COLOR)').choices(['always', 'never', 'auto']))
      .addOption(new Option('--no-color', 'no colour, as --color=never (also NO_COLOR)'))
      .showSuggestionAfterError(true)
      // A command's help lists the global options it takes too, as gh's does.
      .configureHelp({ showGlobalOptions: true })
      .addHelpText('after', ROOT_EPILOGUE)
      .exitOverride()
      .configureOutput(OUTPUT)
  );
}

/** Where the words of the command line are that are not options or their values: `session get x` of `--json session get x`. */
function commandWordsAt(program: Command, args: string[]): number[] {
  const takesValue = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]));
  return args.flatMap((a, i) => (!a.startsWith('-') && !(i > 0 && takesValue.has(args[i - 1]!)) ? [i] : []));
}

const commandWords = (program: Command, args: string[]) => commandWordsAt(program, args).map((i) => args[i]!);
const childNamed = (command: Command, word: string) => command.commands.find((c) => c.name() === word || c.aliases().includes(word));

/**
 * `help` as git has it, at any level: `crux help session put` and `crux session help put` are
 * `crux session put --help`. Words that name no command are left to commander without --help, so that
 * `crux help sesion` is an unknown command with a suggestion (exit 2), not the whole help.
 */
export function helpAsOption(program: Command, argv: string[]): string[] {
  const args = argv.slice(2);
  const at = commandWordsAt(program, args);
  let node = program;
  for (const [k, i] of at.entries()) {
    if (args[i] === 'help' && node.commands.length > 0 && childNamed(node, 'help') === undefined) {
      const rest = at.slice(k + 1).map((j) => args[j]!);
      let target = node;
      for (const [n, word] of rest.entries()) {
        // Past a command without subcommands, the words would be its arguments: its help is the answer.
        if (target.commands.length === 0) break;
        const child = childNamed(target, word);
        if (child === undefined) return [...argv.slice(0, 2), ...at.slice(0, k).map((j) => args[j]!), ...rest.slice(0, n + 1)];
        target = child;
      }
      return [...argv.slice(0, 2), ...args.filter((_, j) => j !== i), '--help'];
    }
    const child = childNamed(node, args[i]!);
    if (child === undefined) break;
    node = child;
  }
  return argv;
}

/** The commands `argv` names, outermost first (`session put` of `crux --json session put x --bogus`). */
export function commandPath(program: Command, argv: string[]): string[] {
  const path: string[] = [];
  let node = program;
  for (const word of commandWords(program, argv.slice(2))) {
    const child = childNamed(node, word);
    if (child === undefined) break;
    path.push(child.name());
    node = child;
  }
  return path;
}

/**
 * `crux … hook <client>` of a client crux knows: a lifecycle hook, which never exits 2 (SPEC §10.2). An unknown
 * client (`crux hook nope`) is a usage error (2), as `hook install nope` is: no payload can cause it.
 */
export function isLifecycleHook(argv: string[]): boolean {
  const [word, sub] = commandWords(makeProgram(), argv.slice(2));
  return word === 'hook' && sub !== undefined && HOOK_CLIENT_NAMES.includes(sub);
}

/** The program with what `argv` needs: the named group with its named command, or everything. */
export async function buildProgram(argv: string[]): Promise<Command> {
  const program = makeProgram();
  const [word, sub] = commandWords(program, argv.slice(2));
  // `completion` walks the whole program; help and unknown words need every group's name and description.
  const add = (name: string, command: Command) => program.addCommand(command, { hidden: name.startsWith('__') });
  if (word !== undefined && Object.hasOwn(GROUPS, word) && word !== 'completion') add(word, (await GROUPS[word]!())(sub));
  else for (const [name, load] of Object.entries(GROUPS)) add(name, (await load())());
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
