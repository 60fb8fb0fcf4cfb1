// `crux mcp install <client>` and `crux mcp uninstall <client>`: crux's server entry merged into, or taken out of,
// an MCP client's own configuration file, naming absolute paths so that a client without the shell's PATH starts it.
import { Command } from 'commander';
import { buildContext, contextOf } from '../context';
import { emit, sentence } from '../../output/emit';
import { renderMcpInstalled, renderMcpUninstalled } from '../../output/install';
import { writeStdout } from '../../output/stdout';
import { CLIENT_FILES_HELP, CLIENT_NAMES, clientOf, MCP_CLIENTS, scopeOf, type McpClient, type McpScope, type TargetOptions } from '../install/mcp-clients';
import { editTomlServer, mergeJsonServer, removeJsonServer, type ConfigEdit } from '../install/mcp-config';
import { readConfigFile, replaceConfigFile } from '../install/config-file';
import { projectRootOf } from '../project-root';
import { agentArgs, cruxScript, installGlobals, NO_STORE_HELP } from '../install/self';

/**
 * The server as it runs now: this Node binary and this crux script, both absolute, with the store and agent the
 * install was given (or CRUX_STORE / CRUX_DATA_DIR named, unless --no-store). No PATH is needed to start it.
 */
function serverSpec(command: Command, env: NodeJS.ProcessEnv) {
  const { args, store } = agentArgs(installGlobals(command), env, command.opts().store !== false);
  return { server: { command: process.execPath, args: [cruxScript(), ...args, 'mcp'] }, store };
}

const withTargetOptions = (command: Command, verb: string) =>
  command
    .argument('<client>', CLIENT_NAMES)
    .option('--user', "the user's configuration (the default): every project of this user")
    .option(
      '--project',
      'the configuration of the project the current directory is in (Claude Code: .mcp.json, Cursor: .cursor/mcp.json, Gemini CLI: .gemini/settings.json, at the root of its repository)',
    )
    .option('--print', `print the configuration file as it would be ${verb} instead of writing it`);

/** The edit of a client's file: the entry merged in, or (undefined) crux's entry taken out. */
const editing =
  (client: McpClient, entry: Parameters<typeof mergeJsonServer>[1] | undefined) =>
  (text: string, where: string): ConfigEdit =>
    client.format === 'toml' ? editTomlServer(text, entry, where) : entry === undefined ? removeJsonServer(text, where) : mergeJsonServer(text, entry, where);

function run(client: McpClient, scope: McpScope, edit: (text: string, where: string) => ConfigEdit, print: boolean | undefined) {
  const path = client.file(scope, { env: process.env, platform: process.platform, projectRoot: () => projectRootOf(process.cwd()) });
  const file = readConfigFile(path);
  const result = edit(file.text, path);
  if (print) writeStdout(result.text === '' ? (client.format === 'json' ? '{}\n' : '') : result.text);
  else if (result.changed) replaceConfigFile(file, result.text);
  return { path, result };
}

export function makeMcpInstallCommand(): Command {
  return withTargetOptions(new Command('install'), 'with crux')
    .description("add crux's MCP server to a client's configuration file, keeping every other entry; a second install changes nothing")
    .option('--no-store', NO_STORE_HELP)
    .addHelpText(
      'after',
      [
        '',
        'The entry runs this Node binary on this crux script by absolute path, with',
        '--agent, --data-dir or --store when given before `mcp`, and the store that',
        'CRUX_STORE or CRUX_DATA_DIR names (unless --no-store); it says which store',
        'the agent will use. Writes atomically and through a symlink (the link stays,',
        'its target is replaced); a file that does not parse is left untouched (exit 5).',
        ...CLIENT_FILES_HELP,
        '',
        'Examples:',
        '  crux --agent planner mcp install claude-code',
        '  crux mcp install claude-desktop --print',
        '  crux mcp install cursor --project',
        '  crux mcp install codex',
      ].join('\n'),
    )
    .action(async (name: string, opts: TargetOptions, command: Command) => {
      const ctx = contextOf(installGlobals(command), process.env);
      const client = clientOf(name, MCP_CLIENTS);
      const scope = scopeOf(client, opts);
      const { server, store } = serverSpec(command, ctx.env);
      const entry = client.entry(server);
      const { path, result } = run(client, scope, editing(client, entry), opts.print);
      if (result.reformatted) ctx.warn(`${path} was written anew by the TOML library: every entry is kept, its comments and layout are not`);
      if (opts.print) return;
      await emit(
        ctx,
        { client: client.name, scope, file: path, changed: result.changed, server, store, afterwards: client.afterwards },
        sentence(renderMcpInstalled),
      );
    });
}

export function makeMcpUninstallCommand(): Command {
  return withTargetOptions(new Command('uninstall'), 'without crux')
    .description("take crux's MCP server out of a client's configuration file, and nothing else; none there changes nothing")
    .addHelpText(
      'after',
      ['', ...CLIENT_FILES_HELP, '', 'Examples:', '  crux mcp uninstall claude-code', '  crux mcp uninstall cursor --project --print'].join('\n'),
    )
    .action(async (name: string, opts: TargetOptions, command: Command) => {
      const ctx = buildContext(command);
      const client = clientOf(name, MCP_CLIENTS);
      const scope = scopeOf(client, opts);
      const { path, result } = run(client, scope, editing(client, undefined), opts.print);
      if (result.foreign) ctx.warn(`the "crux" server in ${path} does not run crux's mcp command: left as it is`);
      if (result.reformatted) ctx.warn(`${path} was written anew by the TOML library: every entry is kept, its comments and layout are not`);
      if (opts.print) return;
      await emit(ctx, { client: client.name, scope, file: path, changed: result.changed, afterwards: client.afterwards }, sentence(renderMcpUninstalled));
    });
}
