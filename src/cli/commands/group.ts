// A command group made from one factory per subcommand: only the subcommand the command line names, or all.
import { Command, type Option } from 'commander';

/** Each subcommand's factory, by the name it is invoked with, in the order help lists them. */
export type CommandFactories = Readonly<Record<string, () => Command>>;

/**
 * The group with only the subcommand `wanted` when it names one (building every command and option of a group
 * costs ~1.5 ms of a `session get`); otherwise (help, an alias, a typo) with all of them, so that help, aliases
 * and suggestions see the whole group.
 */
export function makeGroup(name: string, description: string, factories: CommandFactories, wanted: string | undefined): Command {
  const group = new Command(name).description(description);
  const chosen = wanted !== undefined && Object.hasOwn(factories, wanted) ? [factories[wanted]!] : Object.values(factories);
  for (const make of chosen) group.addCommand(make());
  return group;
}

const VALUES = new WeakMap<Option, readonly string[]>();

/**
 * The values a shell completes for `option`. Unlike commander's `.choices()` this checks nothing: the command
 * checks the value itself and refuses it as invalid input (exit 5), as it always has, not as a usage error (2).
 */
export function completingWith(option: Option, values: readonly string[]): Option {
  VALUES.set(option, values);
  return option;
}

export const completionValuesOf = (option: Option): readonly string[] | undefined => VALUES.get(option);
