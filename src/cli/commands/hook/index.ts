// `crux hook …`: lifecycle hooks of coding agents (SPEC §10.2), and their installation into the agent's settings.
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeClaudeCodeCommand } from './claude-code';
import { makeInstallCommand } from './install';

const COMMANDS = {
  'claude-code': makeClaudeCodeCommand,
  install: makeInstallCommand,
};

export function makeHookCommand(wanted?: string): Command {
  return makeGroup('hook', "lifecycle hooks of coding agents: sessions that follow the agent's own (never exit 2)", COMMANDS, wanted);
}
