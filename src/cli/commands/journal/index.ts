// `crux journal …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeCheckCommand } from './check';
import { makeCompactCommand } from './compact';

const COMMANDS = {
  check: makeCheckCommand,
  compact: makeCompactCommand,
};

export function makeJournalCommand(wanted?: string): Command {
  return makeGroup('journal', 'verify, repair and compact the journals', COMMANDS, wanted);
}
