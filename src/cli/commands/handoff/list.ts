// `crux handoff list`: minted and accepted handoffs with their status, newest first (filtered, sorted, limited), and the keyring.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { addListOptions, statusOption } from '../list-options';
import { listLimit } from '../../list-limit';
import { parseChoices, parseSort } from '../../parse';
import { emit } from '../../../output/emit';
import { handoffIds, renderList } from '../../../output/handoff';
import { parseAgentName } from '../../../shared/ids';
import { HANDOFF_ORDERS } from '../../../domain/list-window';
import { countedHandoffs, HANDOFF_STATUSES as STATUSES } from '../../operations/handoff';

export function makeListCommand(): Command {
  const command = new Command('list')
    .alias('ls')
    .description('minted and accepted handoffs with their status (outstanding, accepted, expired), newest first; the trusted and revoked Ed25519 keys')
    .addOption(statusOption(`only these statuses: ${STATUSES.join(', ')} (repeatable or comma-separated)`, STATUSES))
    .option('--from <agent>', 'only packages from this source agent')
    .option('--to <agent>', 'only packages for this target agent');
  return addListOptions(command, HANDOFF_ORDERS, 'newest first')
    .addHelpText('after', '\nExamples:\n  crux --json handoff list\n  crux handoff list --status outstanding --to builder --sort expires')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const statuses = parseChoices<string>(opts.status, STATUSES, '--status');
      const from = opts.from === undefined ? undefined : parseAgentName(opts.from);
      const to = opts.to === undefined ? undefined : parseAgentName(opts.to);
      const window = { sort: parseSort(opts.sort, HANDOFF_ORDERS), limit: listLimit(opts.limit, ctx) };
      const { document, total } = await countedHandoffs(ctx, { statuses, from, to }, window);
      await emit({ ...ctx, headers: opts.headers }, document, (r, style) => renderList({ ...r, total }, style), handoffIds);
    });
}
