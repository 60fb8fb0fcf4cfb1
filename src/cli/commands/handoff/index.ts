// `crux handoff …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeMintCommand } from './mint';
import { makeAcceptCommand } from './accept';
import { makeInspectCommand } from './inspect';
import { makeListCommand } from './list';
import { makeExportCommand } from './export';
import { makeKeygenCommand, makeTrustCommand, makeUntrustCommand } from './keys';

const COMMANDS = {
  mint: makeMintCommand,
  accept: makeAcceptCommand,
  inspect: makeInspectCommand,
  list: makeListCommand,
  export: makeExportCommand,
  keygen: makeKeygenCommand,
  trust: makeTrustCommand,
  untrust: makeUntrustCommand,
};

export function makeHandoffCommand(wanted?: string): Command {
  return makeGroup('handoff', 'handoff packages: one agent mints a session, another accepts it (daemon-compatible)', COMMANDS, wanted);
}
