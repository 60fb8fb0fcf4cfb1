// `crux mcp`: the MCP server over stdio (SPEC §10.1); the SDK is loaded only here (src/cli/mcp/server.ts).
// `crux mcp install` / `uninstall` put it into an MCP client's configuration (./mcp-install.ts).
import type { Command } from 'commander';
import type { GlobalOptions } from '../context';
import { makeGroup } from './group';
import { makeMcpInstallCommand, makeMcpUninstallCommand } from './mcp-install';

const SUBCOMMANDS = { install: makeMcpInstallCommand, uninstall: makeMcpUninstallCommand };

/** `crux mcp`, with only the subcommand `wanted` names (as every group is made), or both. */
export function makeMcpCommand(wanted?: string): Command {
  return makeGroup('mcp', "serve the agent's sessions, cases and handoffs as MCP tools over stdio (until the client closes stdin)", SUBCOMMANDS, wanted)
    .addHelpText(
      'after',
      [
        '',
        'With no command: the server. Its tools: session_put, session_get, session_list,',
        '  session_archive, session_unarchive, session_close, session_history,',
        '  case_record, case_retrieve, case_list, case_show, create_handoff,',
        '  accept_handoff, handoff_list, journal_check.',
        'The agent identity (--agent or CRUX_AGENT) scopes the sessions;',
        'create_handoff and accept_handoff need one.',
        '',
        'Examples:',
        '  crux --agent planner mcp install claude-code',
        '  crux mcp install claude-desktop --print',
        '  # what that prints: the server by absolute paths, no PATH needed',
        '  {"mcpServers": {"crux": {"command": "/usr/bin/node",',
        '    "args": ["/usr/lib/node_modules/crux/bin/crux.cjs", "mcp"]}}}',
      ].join('\n'),
    )
    .action(async (_opts, command: Command) => {
      const { serve } = await import('../mcp/server');
      await serve(command.optsWithGlobals<GlobalOptions>(), command.parent!.version() ?? '');
    });
}
