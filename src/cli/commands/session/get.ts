// `crux session get <id>`: the state bytes exactly as stored (--json: the whole record, the state spliced in).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { withWarnings } from '../../../output/emit';
import { stdoutIsTerminal } from '../../../output/terminal';
import { parseLogicalSessionId } from '../../../shared/ids';
import { getSession } from '../../operations/session';

export function makeGetCommand(): Command {
  return new Command('get')
    .arguments('<id>')
    .description('print the state bytes exactly as stored (a newline added on a terminal; --json: the whole record)')
    .addHelpText('after', '\nExample:\n  crux session get build-42 > state.json')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const { state, documentText } = await getSession(ctx, parseLogicalSessionId(rawId));
      if (ctx.json) writeStdout(`${withWarnings(documentText, ctx.warnings)}\n`);
      // What get exists to print: --quiet does not suppress it (SPEC §8). A terminal's prompt gets a line of its own.
      else writeStdout(!state.endsWith('\n') && stdoutIsTerminal() ? `${state}\n` : state);
    });
}
