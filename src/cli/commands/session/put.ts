// `crux session put <id> [json]`: create or replace a session state, from the argument, a file or stdin.
import { Command } from 'commander';
import type { GlobalOptions } from '../../context';
import { runPut } from './run';

export function makePutCommand(): Command {
  return new Command('put')
    .arguments('<id> [json]')
    .description('create or replace a session state (from the argument, --file, or stdin: no argument or -)')
    .option('--file <path>', 'read the state from a file (- for stdin)')
    .option('--ttl <duration>', 'expire the session after this long (90s, 15m, 2h, 7d)')
    .option('--expires-at <time>', 'expire the session at this RFC 3339 time')
    .option('--tokens <n>', 'set total_tokens')
    .option('--add-tokens <n>', 'add to total_tokens')
    .option('--max-tokens <n>', 'refuse a total_tokens above this ceiling (env CRUX_SESSION_TOKEN_BUDGET)')
    .addHelpText('after', '\nExample:\n  crux session put build-42 \'{"step":3}\' --ttl 2h --add-tokens 1200')
    .action((rawId: string, json: string | undefined, opts, command: Command) => runPut(rawId, json, opts, command.optsWithGlobals<GlobalOptions>()));
}
