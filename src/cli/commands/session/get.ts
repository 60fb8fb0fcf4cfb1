// `crux session get <id>`: the state bytes exactly as stored (--json: the whole record, the state spliced in).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { parseLogicalSessionId } from '../../../shared/ids';
import { getSession } from '../../operations/session';

export function makeGetCommand(): Command {
  return new Command('get')
    .arguments('<id>')
    .description('print the state bytes exactly as stored (--json: the whole record)')
    .addHelpText('after', '\nExample:\n  crux session get build-42 > state.json')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const { state, documentText } = await getSession(ctx, parseLogicalSessionId(rawId));
      if (ctx.json) writeStdout(`${documentText}\n`);
      else writeStdout(state); // what get exists to print: --quiet does not suppress it (SPEC §8)
    });
}
