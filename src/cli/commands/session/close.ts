// `crux session close <id>`: close a session exactly once, with an outcome and a summary.
import { Command, Option } from 'commander';
import { completingWith } from '../group';
import type { GlobalOptions } from '../../context';
import { CLOSE_OUTCOMES } from '../../operations/session';
import { runClose } from './run';

export function makeCloseCommand(): Command {
  return new Command('close')
    .arguments('<id>')
    .description('close a session exactly once; closing a closed session reports the original close (exit 0)')
    .addOption(completingWith(new Option('--outcome <outcome>', `how it ended: ${CLOSE_OUTCOMES.join(' | ')}`).default('completed'), CLOSE_OUTCOMES))
    .option('--summary <text>', 'a closing note (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session close build-42 --outcome failed --summary "tests red"')
    .action((rawId: string, opts, command: Command) => runClose(rawId, opts, command.optsWithGlobals<GlobalOptions>()));
}
