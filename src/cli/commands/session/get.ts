// `crux session get <id>`: the state bytes exactly as stored (--json: the whole record, the state spliced in).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { withWarnings, writeJson } from '../../../output/emit';
import { stdoutIsTerminal } from '../../../output/terminal';
import { parseLogicalSessionId } from '../../../shared/ids';
import { getSession } from '../../operations/session';
import { parseHistoryPoint } from '../../../domain/session/history';

export function makeGetCommand(): Command {
  return new Command('get')
    .arguments('<id>')
    .description('print the state bytes exactly as stored (a newline added on a terminal; --json: the whole record)')
    .option(
      '--at <seq|time>',
      'the session as it was at that record (a sequence number) or time, from the journal and history/ (exit 3 if it did not exist then)',
    )
    .addHelpText('after', '\nExamples:\n  crux session get build-42 > state.json\n  crux session get build-42 --at 2026-11-29T21:00:00Z')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const at = opts.at === undefined ? undefined : parseHistoryPoint(opts.at);
      const { state, documentText } = await getSession(ctx, parseLogicalSessionId(rawId), at);
      if (ctx.json) writeJson(`${withWarnings(documentText, ctx.warnings)}\n`);
      // What get exists to print: --quiet does not suppress it (SPEC §8). On a terminal the prompt gets a line of
      // its own and a C1 or bidi control inside a string shows as its \uXXXX escape (the same JSON).
      else if (!stdoutIsTerminal()) writeStdout(state);
      else writeJson(state.endsWith('\n') ? state : `${state}\n`);
    });
}
