// `crux journal …`: the group and its commands, one factory each (add a command: a file here and a line below).
import type { Command } from 'commander';
import { makeGroup } from '../group';
import { makeCheckCommand } from './check';
import { makeCompactCommand } from './compact';
import { makeCopyCommand } from './copy';
import { makeDecryptCommand, makeEncryptCommand, makeRekeyCommand } from './encrypt';
import { makeRedactCommand } from './redact';

const COMMANDS = {
  check: makeCheckCommand,
  compact: makeCompactCommand,
  copy: makeCopyCommand,
  redact: makeRedactCommand,
  encrypt: makeEncryptCommand,
  rekey: makeRekeyCommand,
  decrypt: makeDecryptCommand,
};

export function makeJournalCommand(wanted?: string): Command {
  return makeGroup('journal', 'verify, repair, compact, copy, redact, encrypt, rekey and decrypt the journals', COMMANDS, wanted);
}
