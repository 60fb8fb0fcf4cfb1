// `crux completion bash|zsh`: walks the live commander program, so the script lists exactly what --help does.
import { Argument, Command, type Option } from 'commander';
import { writeStdout } from '../../output/stdout';
import { renderBashCompletion, renderZshCompletion, type CommandNode, type IdKind, type OptionNode, type ValueKind } from '../../output/completion';
import { completionValuesOf } from './group';

function valueOf(placeholder: string, choices: readonly string[] | undefined): ValueKind {
  if (choices !== undefined && choices.length > 0) return { kind: 'choices', choices: [...choices] };
  if (/\bdir\b/i.test(placeholder)) return { kind: 'dir' };
  if (/\b(file|path)\b/i.test(placeholder)) return { kind: 'file' };
  return { kind: 'none' };
}

/** The ids an argument takes, read from the data directory at completion time: `session get <id>`, `handoff mint <session-id>`. */
function idsOf(path: string[], placeholder: string): ValueKind | undefined {
  if (placeholder === 'session-id') return { kind: 'ids', of: 'session' };
  const group = path[0];
  if (placeholder === 'id' && (group === 'session' || group === 'case' || group === 'handoff')) return { kind: 'ids', of: group as IdKind };
  return undefined;
}

function optionNode(option: Option): OptionNode {
  const placeholder = option.flags.match(/[<[]([^>\]]+)[>\]]/)?.[1] ?? '';
  return {
    names: [option.long, option.short].filter((n): n is string => typeof n === 'string'),
    description: option.description,
    takesValue: option.required || option.optional,
    value: valueOf(placeholder, option.argChoices ?? completionValuesOf(option)),
  };
}

/** The command tree as --help shows it: visible commands (with the implicit `help`), visible options. */
function describeTree(command: Command, path: string[] = [], inherited: OptionNode[] = []): CommandNode {
  const help = command.createHelp();
  const options = [...inherited, ...help.visibleOptions(command).map(optionNode)];
  const children = help.visibleCommands(command).map((child) => {
    const childPath = [...path, child.name()];
    if (child.name() === 'help' && !command.commands.includes(child)) {
      // commander's implicit `help [command]`
      // The commands help lists (not the hidden __complete, nor help itself).
      const names = help
        .visibleCommands(command)
        .filter((c) => c !== child)
        .map((c) => c.name());
      return {
        path: childPath,
        aliases: [],
        description: child.description(),
        options: inherited,
        argument: { kind: 'choices', choices: names } as ValueKind,
        children: [],
      };
    }
    return describeTree(
      child,
      childPath,
      options.filter((o) => !o.names.includes('--help') && !o.names.includes('--version')),
    );
  });
  const first = command.registeredArguments[0];
  return {
    path,
    aliases: command.aliases(),
    description: command.description(),
    options,
    argument: first === undefined ? { kind: 'none' } : (idsOf(path, first.name()) ?? valueOf(first.name(), first.argChoices)),
    children,
  };
}

/** `crux completion <shell>`: walks the program it is part of, so main builds every group for it. */
export function makeCompletionCommand(): Command {
  return new Command('completion')
    .description('print a completion script for every command and option (bash or zsh)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .addHelpText(
      'after',
      '\nExamples:\n  source <(crux completion bash)\n  crux completion bash > ~/.local/share/bash-completion/completions/crux\n  crux completion zsh > "${fpath[1]}/_crux"',
    )
    .action((shell: 'bash' | 'zsh', _opts, command: Command) => {
      const tree = describeTree(command.parent!);
      writeStdout(shell === 'bash' ? renderBashCompletion(tree) : renderZshCompletion(tree));
    });
}
