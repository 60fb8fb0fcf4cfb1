// `crux case record`: record a case, from flags or one JSON object on stdin, and print its id.
import { Command } from 'commander';
import type { GlobalOptions } from '../../context';
import { collect } from '../list-options';
import { runRecord } from './run-record';

export function makeRecordCommand(): Command {
  return new Command('record')
    .description('record a case and print its id')
    .option('--task <text>', 'what was to be done (the retrieval key)')
    .option('--action <text>', 'what was done')
    .option('--outcome <text>', 'how it turned out')
    .option('--context <text>', 'the circumstances')
    .option('--failure', 'the attempt failed (success is false)')
    .option('--reward <r>', 'a number, clamped to [0,1] (default 1.0)')
    .option('--tag <tag>', 'a tag, also matched by retrieve (repeatable)', collect, [])
    .option('--receipt <text>', 'a source receipt, e.g. of the run')
    .option('--stdin', 'read one JSON object with the same fields (task, action, outcome, context, success, reward, tags, source_receipt)')
    .addHelpText('after', '\nExample:\n  crux case record --task "rotate the TLS cert" --action "certbot renew" \\\n    --outcome "renewed" --tag tls')
    .action((opts, command: Command) => runRecord(opts, command.optsWithGlobals<GlobalOptions>()));
}
