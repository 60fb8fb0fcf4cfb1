// `crux session …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makePutCommand } from './put';
import { makeGetCommand } from './get';
import { makeHistoryCommand } from './history';
import { makeListCommand } from './list';
import { makeArchiveCommand, makeUnarchiveCommand } from './archive';
import { makeDeleteCommand } from './delete';
import { makeCloseCommand } from './close';
import { makeReapCommand } from './reap';
import { makeMachineCommand } from './machine';
import { makeExportCommand } from './export';
import { makeImportCommand } from './import';

const COMMANDS = {
  put: makePutCommand,
  get: makeGetCommand,
  history: makeHistoryCommand,
  list: makeListCommand,
  archive: makeArchiveCommand,
  unarchive: makeUnarchiveCommand,
  delete: makeDeleteCommand,
  close: makeCloseCommand,
  reap: makeReapCommand,
  machine: makeMachineCommand,
  export: makeExportCommand,
  import: makeImportCommand,
};

export function makeSessionCommand(wanted?: string): Command {
  return makeGroup('session', 'sessions: what an agent is doing (state kept byte-for-byte)', COMMANDS, wanted);
}
