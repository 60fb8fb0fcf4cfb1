// `crux session list`: the sessions of the caller (or of every agent), newest first, filtered.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderListing } from '../../../output/session';
import { listSessions } from '../../operations/session';

export function makeListCommand(): Command {
  return new Command('list')
    .alias('ls')
    .description('list sessions: active and handed-off ones, newest first (archived and closed only with --all)')
    .option('--all', 'every session, archived and closed included')
    .option('--archived', 'only archived sessions')
    .option('--stranded', 'only non-closed sessions whose freshness is stale')
    .option('--all-agents', "every agent's sessions, with an agent column (the operator's view)")
    .option('--fresh-for <duration>', 'fresh up to this age (env CRUX_FRESH_FOR, default 15m)')
    .option('--stale-after <duration>', 'stale beyond this age (env CRUX_STALE_AFTER, default 24h)')
    .addHelpText('after', '\nExamples:\n  crux session list --all-agents\n  crux session list --stranded --stale-after 2h --json')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const filter = { all: opts.all === true, archived: opts.archived === true, stranded: opts.stranded === true, allAgents: opts.allAgents === true };
      await emit(ctx, await listSessions(ctx, filter, opts), renderListing);
    });
}
