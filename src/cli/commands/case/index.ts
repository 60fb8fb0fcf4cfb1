// `crux case …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeRecordCommand } from './record';
import { makeRetrieveCommand } from './retrieve';
import { makeShowCommand } from './show';
import { makeListCommand } from './list';
import { makeDeleteCommand } from './delete';
import { makeExportCommand } from './export';
import { makeImportCommand } from './import';

const COMMANDS = {
  record: makeRecordCommand,
  retrieve: makeRetrieveCommand,
  show: makeShowCommand,
  list: makeListCommand,
  delete: makeDeleteCommand,
  export: makeExportCommand,
  import: makeImportCommand,
};

export function makeCaseCommand(wanted?: string): Command {
  return makeGroup('case', 'cases: what an agent did and how it turned out (procedural memory)', COMMANDS, wanted);
}
