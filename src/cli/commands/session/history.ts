// `crux session history <id>`: every recorded version of a session, newest first, from the journal and history/.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { parseLimit } from '../list-options';
import { emit } from '../../../output/emit';
import { renderHistory } from '../../../output/history';
import { parseLogicalSessionId } from '../../../shared/ids';
import { historyOf } from '../../operations/session';

export function makeHistoryCommand(): Command {
  return new Command('history')
    .arguments('<id>')
    .description('every recorded version of a session, newest first: seq, time, event, actor, status, state size (journal and history/)')
    .option('--limit <n>', 'at most n versions (the newest)')
    .addHelpText('after', '\nExamples:\n  crux session history build-42 --limit 10\n  crux session get build-42 --at 1207    # the state as of that record')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const limit = parseLimit(opts.limit);
      const result = await historyOf(ctx, parseLogicalSessionId(rawId), limit);
      await emit(ctx, result, renderHistory);
    });
}
