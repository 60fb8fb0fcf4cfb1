// `crux store …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeInitCommand } from './init';

const COMMANDS = {
  init: makeInitCommand,
};

export function makeStoreCommand(wanted?: string): Command {
  return makeGroup('store', 'make a store ready ahead of its first write (a PostgreSQL schema, a data directory)', COMMANDS, wanted);
}
