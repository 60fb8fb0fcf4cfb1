// `crux hook …`: lifecycle hooks of coding agents (SPEC §10.2), and their installation into the agent's settings.
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { CLAUDE_CODE, GEMINI_CLI } from '../../hook/clients';
import { makeHookRunCommand } from './run';
import { makeInstallCommand, makeUninstallCommand } from './install';

const COMMANDS = {
  'claude-code': () => makeHookRunCommand(CLAUDE_CODE),
  'gemini-cli': () => makeHookRunCommand(GEMINI_CLI),
  install: makeInstallCommand,
  uninstall: makeUninstallCommand,
};

export function makeHookCommand(wanted?: string): Command {
  return makeGroup('hook', "lifecycle hooks of coding agents: sessions that follow the agent's own (never exit 2)", COMMANDS, wanted);
}
