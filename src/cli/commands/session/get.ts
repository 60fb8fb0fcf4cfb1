// `crux session get <id>`: the state bytes exactly as stored (--json: the whole record, the state spliced in).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { writeStdout } from '../../../output/stdout';
import { parseLogicalSessionId } from '../../../shared/ids';
import { spliceState } from '../../../domain/session/lines';
import { getSession } from '../../../domain/session/store';
import { scopeOf } from './scope';

export function makeGetCommand(): Command {
  return new Command('get')
    .arguments('<id>')
    .description('print the state bytes exactly as stored (--json: the whole record)')
    .addHelpText('after', '\nExample:\n  crux session get build-42 > state.json')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const { session: view, state } = await getSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      // Splice the stored bytes in as "state": JSON.stringify would re-encode numbers and key order.
      if (ctx.json) writeStdout(`{"session":${spliceState(JSON.stringify(view), state)}}\n`);
      else writeStdout(state); // what get exists to print: --quiet does not suppress it (SPEC §8)
    });
}
