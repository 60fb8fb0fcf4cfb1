// `crux session history <id>`: every recorded version of a session, newest first, from the journal and history/.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { listLimit, TERMINAL_ROWS } from '../../list-limit';
import { emit } from '../../../output/emit';
import { renderHistory } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { countedHistory } from '../../operations/session';

export function makeHistoryCommand(): Command {
  return new Command('history')
    .arguments('<id>')
    .description('every recorded version of a session, newest first: seq, time, event, actor, status, state size (journal and history/)')
    .option('--limit <n>', `at most n versions, the newest; 0: all (default: ${TERMINAL_ROWS} on a terminal, all piped and with --json)`)
    .option('--no-headers', 'leave out the header line of the table')
    .addHelpText('after', '\nExamples:\n  crux session history build-42 --limit 10\n  crux session get build-42 --at 1207    # the state as of that record')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const { document, total } = await countedHistory(ctx, parseLogicalSessionId(rawId), listLimit(opts.limit, ctx));
      await emit(
        { ...ctx, headers: opts.headers },
        document,
        (r, style) => renderHistory({ ...r, total }, style),
        (r) => r.history.map((h) => String(h.seq)),
      );
    });
}
