// `crux session list`: the sessions of the caller (or of every agent), newest first, filtered, sorted, limited.
import { Command } from 'commander';
import type { GlobalOptions } from '../../context';
import { addListOptions, statusOption } from '../list-options';
import { runList } from './run-list';
import { SESSION_ORDERS } from '../../../domain/list-window';
import { SESSION_STATES } from '../../../domain/session/machine';

export function makeListCommand(): Command {
  const command = new Command('list')
    .alias('ls')
    .description('list sessions: active and handed-off ones, newest first (archived and closed, with their outcome, only with --all)')
    .option('--all', 'every session, archived and closed included')
    .option('--archived', 'only archived sessions')
    .option('--stranded', 'only stranded sessions: stale, neither closed nor archived')
    .option('--all-agents', "every agent's sessions, with an agent column (the operator's view)")
    .addOption(statusOption(`only these statuses: ${SESSION_STATES.join(', ')} (repeatable or comma-separated; implies --all)`, SESSION_STATES))
    .option('--fresh-for <duration>', 'fresh up to this age (env CRUX_FRESH_FOR, default 15m)')
    .option('--stale-after <duration>', 'stale beyond this age (env CRUX_STALE_AFTER, default 24h)');
  return addListOptions(command, SESSION_ORDERS, '-updated, newest first')
    .addHelpText(
      'after',
      '\nExamples:\n  crux session list --all-agents\n  crux session list --stranded --stale-after 2h --json\n  crux session list --status closed --sort -tokens --limit 10',
    )
    .action((opts, command: Command) => runList(opts, command.optsWithGlobals<GlobalOptions>()));
}
