// `crux session put | get | close <id>`: a session's state written, read and closed, as commander defines them; the
// fast path (cli/fast) reads the same command lines, and either way each runs run.ts.
import { Command, Option } from 'commander';
import { completingWith } from '../group';
import type { GlobalOptions } from '../../context';
import { CLOSE_OUTCOMES } from '../../operations/session';
import { runClose, runGet, runPut } from './run';

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

/** The state bytes exactly as stored (--json: the whole record, the state spliced in). */
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

/** Closed exactly once, with an outcome and a summary. */
export function makeCloseCommand(): Command {
  return new Command('close')
    .arguments('<id>')
    .description('close a session exactly once; closing a closed session reports the original close (exit 0)')
    .addOption(completingWith(new Option('--outcome <outcome>', `how it ended: ${CLOSE_OUTCOMES.join(' | ')}`).default('completed'), CLOSE_OUTCOMES))
    .option('--summary <text>', 'a closing note (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session close build-42 --outcome failed --summary "tests red"')
    .action((rawId: string, opts, command: Command) => runClose(rawId, opts, command.optsWithGlobals<GlobalOptions>()));
}
