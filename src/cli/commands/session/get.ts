// `crux session get <id>`: the state bytes exactly as stored (--json: the whole record, the state spliced in).
import { Command } from 'commander';
import type { GlobalOptions } from '../../context';
import { runGet } from './run';

export function makeGetCommand(): Command {
  return new Command('get')
    .arguments('<id>')
    .description('print the state bytes exactly as stored (a newline added on a terminal; --json: the whole record)')
    .option(
      '--at <seq|time>',
      'the session as it was at that record (a sequence number) or time, from the journal and history/ (exit 3 if it did not exist then)',
    )
    .addHelpText('after', '\nExamples:\n  crux session get build-42 > state.json\n  crux session get build-42 --at 2026-11-29T21:00:00Z')
    .action((rawId: string, opts, command: Command) => runGet(rawId, opts, command.optsWithGlobals<GlobalOptions>()));
}
