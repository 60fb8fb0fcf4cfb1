// `crux key …`: the store key of an encrypted store (SPEC §13).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeKeyNewCommand } from './new';

const COMMANDS = {
  new: makeKeyNewCommand,
};

export function makeKeyCommand(wanted?: string): Command {
  return makeGroup('key', 'the key of an encrypted store (docs/keys.md)', COMMANDS, wanted);
}
