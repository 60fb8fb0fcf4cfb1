// The fast paths' command line: the shapes of their commands (fast/*-commands.ts, fast/commands.ts) that
// commander would parse one way only, read without building commander's program (~11 M instructions of a 2k
// `get`). Anything else — help, a version, `--`, an unknown or misplaced option, an option's value that reads as
// an option, a value commander would refuse, too few or too many operands — is not parsed here: the full
// program answers it (fast/start.ts), with commander's own words and exit codes.
// test/unit/cli/fast-path.test.ts holds each table to commander's definitions and each parse to commander's.
import type { GlobalOptions } from '../context';

/** An option as the fast path reads it: commander's attribute name, whether it takes a value, and its choices. */
export interface FastOption {
  readonly attribute: string;
  readonly takesValue: boolean;
  /** `--no-color`: the value a flag sets, when not true. */
  readonly sets?: boolean;
  readonly choices?: readonly string[];
  /** A repeatable option (commander's collect into a list; its default, if any, is in the command's defaults). */
  readonly repeatable?: boolean;
}

export interface FastCommand<Opts> {
  /** The group and the command: `session get`. */
  readonly path: readonly [string, string];
  /** The command's other names (`session ls`). */
  readonly aliases?: readonly string[];
  /** How many operands it takes: at least, at most (Infinity: a variadic last one, `<query...>`). */
  readonly operands: readonly [number, number];
  /** Its own options by flag (`--expires-at`), and the values commander gives those not on the line. */
  readonly options: Readonly<Record<string, FastOption>>;
  readonly defaults?: Readonly<Record<string, string | boolean | readonly string[]>>;
  readonly run: (operands: readonly string[], opts: Opts, globals: GlobalOptions) => Promise<void>;
}

const value = (attribute: string, choices?: readonly string[]): FastOption => ({ attribute, takesValue: true, ...(choices ? { choices } : {}) });
const flag = (attribute: string, sets?: boolean): FastOption => ({ attribute, takesValue: false, ...(sets === undefined ? {} : { sets }) });

/** The program's options (program.ts), which commander takes anywhere on the line. */
export const GLOBAL_OPTIONS: Readonly<Record<string, FastOption>> = {
  '--data-dir': value('dataDir'),
  '--store': value('store'),
  '--key-file': value('keyFile'),
  '--agent': value('agent'),
  '--actor': value('actor'),
  '--json': flag('json'),
  '--now': value('now'),
  '-q': flag('quiet'),
  '--quiet': flag('quiet'),
  '--color': value('color', ['always', 'never', 'auto']),
  '--no-color': flag('color', false),
};

export { value as valueOption, flag as flagOption };

/**
 * Whether commander may read a value given apart (`--summary -q`) as an option: the program reads its own
 * anywhere on the line (`-q` is --quiet, and a group `-qx` starts with it), so a command's option would be left
 * without its value. A command's own option takes one that begins with a dash and a letter or digit no program
 * option begins with (`--sort -tokens`, `--limit -5`), as commander does; anything else that reads as an option
 * is left to commander, as is every such value of a program's option. `--sort=-tokens` is a value whatever it holds.
 */
function readsAsOption(value: string, global: boolean): boolean {
  return value.length > 1 && value.startsWith('-') && (global || !/^-[0-9a-pr-z]/.test(value));
}

export interface FastParse<Opts> {
  readonly command: FastCommand<Opts>;
  readonly operands: string[];
  readonly opts: Opts;
  readonly globals: GlobalOptions;
}

/**
 * `args` (the line after `node crux`) as commander would parse it for one of `commands`, or undefined where
 * the full program must answer. A command's own options count only after its two words, as commander reads
 * them; the program's anywhere.
 */
export function parseFast(args: readonly string[], commands: readonly FastCommand<any>[]): FastParse<any> | undefined {
  const words: string[] = [];
  let command: FastCommand<any> | undefined;
  const globals: Record<string, unknown> = {};
  const opts: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.length > 1 && arg.startsWith('-')) {
      const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
      const name = eq > 2 ? arg.slice(0, eq) : arg;
      const global = Object.hasOwn(GLOBAL_OPTIONS, name) ? GLOBAL_OPTIONS[name] : undefined;
      const own = command !== undefined && Object.hasOwn(command.options, name) ? command.options[name] : undefined;
      const option = global ?? own;
      if (option === undefined) return undefined;
      let given: unknown = option.sets ?? true;
      if (option.takesValue) {
        const inline = eq > 2;
        given = inline ? arg.slice(eq + 1) : args[++i];
        if (given === undefined || (!inline && readsAsOption(given as string, global !== undefined))) return undefined;
        if (option.choices !== undefined && !option.choices.includes(given as string)) return undefined;
      } else if (eq > 2) return undefined;
      const into = global !== undefined ? globals : opts;
      if (option.repeatable) into[option.attribute] = [...((into[option.attribute] as string[] | undefined) ?? []), given];
      else into[option.attribute] = given;
      continue;
    }
    if (words.length < 2) {
      words.push(arg);
      if (words.length === 2) {
        command = commands.find((c) => c.path[0] === words[0] && (c.path[1] === words[1] || c.aliases?.includes(words[1]!)));
        if (command === undefined) return undefined;
      }
      continue;
    }
    words.push(arg);
  }
  if (command === undefined) return undefined;
  const operands = words.slice(2);
  if (operands.length < command.operands[0] || operands.length > command.operands[1]) return undefined;
  for (const [name, given] of Object.entries(command.defaults ?? {})) {
    const { attribute } = command.options[name]!;
    if (opts[attribute] === undefined) opts[attribute] = Array.isArray(given) ? [...given] : given;
  }
  return { command, operands, opts, globals: globals as GlobalOptions };
}
