// The MCP clients `crux mcp install` configures, each as data: where its configuration file lives (as the client
// documents it), in which format, and how one server entry is spelled there.
import { join } from 'node:path';
import { invalid, usage } from '../../shared/errors';

export type McpScope = 'user' | 'project';

/** A server as every client names one: an executable with its arguments (and optional environment). */
export interface ServerSpec {
  readonly command: string;
  readonly args: readonly string[];
}

export interface Where {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  /** The root of the project the current directory is in (its repository, else the directory). */
  readonly projectRoot: () => string;
}

export interface McpClient {
  readonly name: string;
  readonly label: string;
  readonly format: 'json' | 'toml';
  /** The scopes it has, the default first. */
  readonly scopes: readonly McpScope[];
  file(scope: McpScope, where: Where): string;
  /** The entry as this client's file spells it. */
  entry(server: ServerSpec): Record<string, unknown>;
  /** What to do after a change, in the client's terms. */
  readonly afterwards: string;
}

function home(env: NodeJS.ProcessEnv, what: string): string {
  if (!env.HOME) throw invalid(`${what} is under HOME, which is not set`, 'set HOME; nothing was written');
  return env.HOME;
}

export const MCP_CLIENTS: readonly McpClient[] = [
  {
    name: 'claude-code',
    label: 'Claude Code',
    format: 'json',
    scopes: ['user', 'project'],
    // User servers: `mcpServers` of ~/.claude.json (under CLAUDE_CONFIG_DIR when set); project: .mcp.json at the root.
    file: (scope, { env, projectRoot }) =>
      scope === 'project' ? join(projectRoot(), '.mcp.json') : join(env.CLAUDE_CONFIG_DIR || home(env, '~/.claude.json'), '.claude.json'),
    entry: (s) => ({ type: 'stdio', command: s.command, args: [...s.args] }),
    afterwards: 'Claude Code reads it when it starts (`claude mcp list` checks it)',
  },
  {
    name: 'claude-desktop',
    label: 'Claude Desktop',
    format: 'json',
    scopes: ['user'],
    file: (_scope, { env, platform }) => {
      if (platform === 'darwin') return join(home(env, 'the Claude Desktop configuration'), 'Library/Application Support/Claude/claude_desktop_config.json');
      if (platform === 'win32') {
        if (!env.APPDATA) throw invalid('the Claude Desktop configuration is under APPDATA, which is not set', 'nothing was written');
        return join(env.APPDATA, 'Claude', 'claude_desktop_config.json');
      }
      // Electron's appData on Linux: XDG_CONFIG_HOME, else ~/.config.
      return join(env.XDG_CONFIG_HOME || join(home(env, 'the Claude Desktop configuration'), '.config'), 'Claude', 'claude_desktop_config.json');
    },
    entry: (s) => ({ command: s.command, args: [...s.args] }),
    afterwards: 'Claude Desktop reads it when it starts: quit and reopen it',
  },
  {
    name: 'cursor',
    label: 'Cursor',
    format: 'json',
    scopes: ['user', 'project'],
    file: (scope, { env, projectRoot }) => join(scope === 'project' ? projectRoot() : home(env, '~/.cursor/mcp.json'), '.cursor', 'mcp.json'),
    entry: (s) => ({ command: s.command, args: [...s.args] }),
    afterwards: 'Cursor reads it when it starts (Settings → MCP lists its servers)',
  },
  {
    name: 'gemini-cli',
    label: 'Gemini CLI',
    format: 'json',
    scopes: ['user', 'project'],
    // Gemini CLI's settings (docs/get-started/configuration.md): `mcpServers` of ~/.gemini/settings.json, or of the
    // project's .gemini/settings.json; the same file its hooks live in (`crux hook install gemini-cli`).
    file: (scope, { env, projectRoot }) => join(scope === 'project' ? projectRoot() : home(env, '~/.gemini/settings.json'), '.gemini', 'settings.json'),
    entry: (s) => ({ command: s.command, args: [...s.args] }),
    afterwards: 'Gemini CLI reads it when it starts (`gemini mcp list` checks it)',
  },
  {
    name: 'codex',
    label: 'Codex',
    format: 'toml',
    scopes: ['user'],
    file: (_scope, { env }) => join(env.CODEX_HOME || join(home(env, '~/.codex/config.toml'), '.codex'), 'config.toml'),
    entry: (s) => ({ command: s.command, args: [...s.args] }),
    afterwards: 'Codex reads it when it starts (`codex mcp list` checks it)',
  },
];

/** Where each client keeps its configuration, as `mcp install --help` and `mcp uninstall --help` say it. */
export const CLIENT_FILES_HELP = [
  'Files:',
  '  claude-code     ~/.claude.json (mcpServers; under CLAUDE_CONFIG_DIR when set);',
  '                  --project: .mcp.json',
  '  claude-desktop  ~/.config/Claude/claude_desktop_config.json',
  '                  (macOS: ~/Library/Application Support/Claude/,',
  '                  Windows: %APPDATA%\\Claude\\)',
  '  cursor          ~/.cursor/mcp.json; --project: .cursor/mcp.json',
  '  gemini-cli      ~/.gemini/settings.json (mcpServers); --project:',
  '                  .gemini/settings.json (or the extension: gemini extensions',
  '                  install <crux checkout>)',
  '  codex           ~/.codex/config.toml ([mcp_servers.crux]; under CODEX_HOME)',
];

/** `--user`, `--project` and `--print` as install and uninstall take them. */
export interface TargetOptions {
  user?: boolean;
  project?: boolean;
  print?: boolean;
}

export const CLIENT_NAMES = MCP_CLIENTS.map((c) => c.name).join(', ');

/** The client of `clients` named on the command line (exit 2 for one crux does not know): MCP's, or the hooks'. */
export function clientOf<C extends { readonly name: string }>(name: string, clients: readonly C[]): C {
  const client = clients.find((c) => c.name === name);
  if (client === undefined) throw usage(`unknown client ${JSON.stringify(name)}`, `the clients are: ${clients.map((c) => c.name).join(', ')}`);
  return client;
}

/** The configuration install writes: --user, --project, or the client's first (exit 2 for one it has not). */
export function scopeOf(client: McpClient, opts: TargetOptions): McpScope {
  if (opts.user && opts.project) throw usage('give --user or --project, not both');
  const scope = opts.project ? 'project' : opts.user ? 'user' : client.scopes[0]!;
  if (!client.scopes.includes(scope))
    throw usage(`${client.label} has no ${scope} configuration`, `its configuration is the ${client.scopes.join(' or ')} one`);
  return scope;
}
