// `crux session list`: the sessions of the caller (or of every agent), newest first, filtered, sorted, limited.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { addListOptions, listLimit, statusOption } from '../list-options';
import { parseChoices, parseSort } from '../../parse';
import { emit } from '../../../output/emit';
import { listingIds, renderListing } from '../../../output/session';
import { countedSessions } from '../../operations/session';
import { SESSION_ORDERS } from '../../../domain/list-window';
import { SESSION_STATES } from '../../../domain/session/machine';

export function makeListCommand(): Command {
  const command = new Command('list')
    .alias('ls')
    .description('list sessions: active and handed-off ones, newest first (archived and closed, with their outcome, only with --all)')
    .option('--all', 'every session, archived and closed included')
    .option('--archived', 'only archived sessions')
    .option('--stranded', 'only non-closed sessions whose freshness is stale')
    .option('--all-agents', "every agent's sessions, with an agent column (the operator's view)")
    .addOption(statusOption(`only these statuses: ${SESSION_STATES.join(', ')} (repeatable or comma-separated; implies --all)`, SESSION_STATES))
    .option('--fresh-for <duration>', 'fresh up to this age (env CRUX_FRESH_FOR, default 15m)')
    .option('--stale-after <duration>', 'stale beyond this age (env CRUX_STALE_AFTER, default 24h)');
  return addListOptions(command, SESSION_ORDERS, '-updated, newest first')
    .addHelpText(
      'after',
      '\nExamples:\n  crux session list --all-agents\n  crux session list --stranded --stale-after 2h --json\n  crux session list --status closed --sort -tokens --limit 10',
    )
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const statuses = parseChoices<string>(opts.status, SESSION_STATES, '--status');
      const window = {
        sort: parseSort(opts.sort, SESSION_ORDERS),
        limit: listLimit(opts.limit, ctx),
        where: statuses && ((s: { status: string }) => statuses.includes(s.status)),
      };
      const filter = {
        all: opts.all === true || statuses !== undefined,
        archived: opts.archived === true,
        stranded: opts.stranded === true,
        allAgents: opts.allAgents === true,
      };
      // How many matched (for the line that ends a list cut short) is the table's, not the document's.
      const { document, total } = await countedSessions(ctx, filter, { freshFor: opts.freshFor, staleAfter: opts.staleAfter }, window);
      await emit({ ...ctx, headers: opts.headers }, document, (r, style) => renderListing({ ...r, total }, style), listingIds);
    });
}
