// `crux hook install <client>` and `crux hook uninstall <client>`: crux's hooks merged into, or taken out of, the
// agent's settings file, idempotently, atomically and through symlinks (src/cli/install/config-file.ts).
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { buildContext, contextOf } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderInstalled, renderUninstalled, type AgentStore } from '../../../output/install';
import { writeStdout } from '../../../output/stdout';
import { invalid, usage } from '../../../shared/errors';
import { mergeHooks, removeHooks } from '../../hook/settings';
import { HOOK_CLIENTS, type HookClient } from '../../hook/clients';
import { clientOf as clientIn } from '../../install/mcp-clients';
import { readConfigFile, replaceConfigFile } from '../../install/config-file';
import { projectRootOf } from '../../project-root';
import { agentArgs, cruxScript, installGlobals, NO_STORE_HELP } from '../../install/self';

/** A word as a POSIX shell reads it back: as is when it is plain, else single-quoted. */
const shellWord = (word: string) => (/^[\w./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

/**
 * The hook command: this Node binary on this crux script, both absolute (the agent runs hooks without the shell's
 * PATH, where `crux` may not be), with the store (a flag's, or CRUX_STORE's / CRUX_DATA_DIR's unless --no-store),
 * the agent, and --record-cases.
 */
function hookCommand(client: HookClient, command: Command, recordCases: boolean): { cmd: string; store: AgentStore } {
  const { args, store } = agentArgs(installGlobals(command), process.env, command.opts().store !== false);
  const words = [process.execPath, cruxScript(), ...args, 'hook', client.name];
  if (recordCases) words.push('--record-cases');
  return { cmd: words.map(shellWord).join(' '), store };
}

interface TargetOptions {
  settings?: string;
  user?: boolean;
  print?: boolean;
}

/** The settings file: --settings, --user's under HOME, else the project's at the root of the repository. */
function settingsPath(client: HookClient, opts: TargetOptions, env: NodeJS.ProcessEnv): string {
  if (opts.settings !== undefined && opts.user) throw usage('give --settings or --user, not both');
  if (opts.settings !== undefined) return resolve(opts.settings);
  if (opts.user) {
    if (!env.HOME) throw invalid('--user needs HOME', 'or name the file with --settings');
    return join(env.HOME, client.settingsFile);
  }
  return join(projectRootOf(process.cwd()), client.settingsFile);
}

const withTargetOptions = (command: Command, verb: string) =>
  command
    .argument('<client>', HOOK_CLIENTS.map((c) => c.name).join(' or '))
    .option(
      '--settings <file>',
      `the settings file (default .claude/settings.json or .gemini/settings.json at the root of the repository the current directory is in, else in it)`,
    )
    .option('--user', "the user's settings, ~/.claude/settings.json or ~/.gemini/settings.json")
    .option('--print', `print the settings as they would be ${verb} instead of writing them`);

export function makeInstallCommand(): Command {
  return withTargetOptions(new Command('install'), 'with the hooks')
    .description("add crux's hooks to a coding agent's settings file, keeping every other setting; a second install changes nothing")
    .option('--record-cases', 'install the hooks with --record-cases: each session ending records one case from its transcript')
    .option('--no-store', NO_STORE_HELP)
    .addHelpText(
      'after',
      [
        '',
        'Each hook runs this Node binary on this crux script by absolute path (no PATH',
        'needed), with --agent, --data-dir or --store when given before `hook`, and the',
        'store that CRUX_STORE or CRUX_DATA_DIR names (unless --no-store); install says',
        'which store the agent will use. Writes atomically and through a symlink (the',
        'link stays, its target is replaced); a settings file that is not valid JSON is',
        'left untouched (exit 5).',
        '`crux hook uninstall <client>` takes out what this added.',
        '',
        'Examples:',
        '  crux hook install claude-code --record-cases',
        '  crux --agent reviewer hook install claude-code --user',
        '  crux hook install claude-code --print --settings .claude/settings.local.json',
        '  crux hook install gemini-cli',
      ].join('\n'),
    )
    .action(async (name: string, opts: TargetOptions & { recordCases?: boolean }, command: Command) => {
      const ctx = contextOf(installGlobals(command), process.env);
      const client = clientIn(name, HOOK_CLIENTS);
      const file = readConfigFile(settingsPath(client, opts, ctx.env));
      const { cmd, store } = hookCommand(client, command, Boolean(opts.recordCases));
      const merged = mergeHooks(client, file.text, cmd, file.path);
      if (opts.print) return writeStdout(merged.text === '' ? '{}\n' : merged.text);
      if (merged.changed) replaceConfigFile(file, merged.text);
      await emit(ctx, { settings: file.path, changed: merged.changed, events: merged.events, command: cmd, store }, sentence(renderInstalled));
    });
}

export function makeUninstallCommand(): Command {
  return withTargetOptions(new Command('uninstall'), 'without them')
    .description("take crux's hooks out of a coding agent's settings file, and nothing else; none there changes nothing")
    .addHelpText('after', '\nExamples:\n  crux hook uninstall claude-code\n  crux hook uninstall claude-code --user\n  crux hook uninstall gemini-cli --print')
    .action(async (name: string, opts: TargetOptions, command: Command) => {
      const ctx = buildContext(command);
      const client = clientIn(name, HOOK_CLIENTS);
      const file = readConfigFile(settingsPath(client, opts, ctx.env));
      const removed = removeHooks(client, file.text, file.path);
      if (opts.print) return writeStdout(removed.text === '' ? '{}\n' : removed.text);
      if (removed.changed) replaceConfigFile(file, removed.text);
      await emit(ctx, { settings: file.path, changed: removed.changed, events: removed.events }, sentence(renderUninstalled));
    });
}
