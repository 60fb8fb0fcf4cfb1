// `crux session reap`: close every expired session with the outcome expired (cron's command).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderReap } from '../../../output/session';
import { reapSessions } from '../../../domain/session/store';
import { sessionScope as scopeOf } from '../../operations/scope';

export function makeReapCommand(): Command {
  return new Command('reap')
    .description('close every session past its expires_at with the outcome expired (all agents unless --agent)')
    .option('--dry-run', 'show what would be reaped; write nothing')
    .addHelpText('after', '\nExamples (cron):\n  */5 * * * * crux session reap --quiet\n  crux session reap --dry-run --json')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await reapSessions(scopeOf(ctx), { dryRun: opts.dryRun === true });
      await emit(ctx, result, sentence(renderReap));
    });
}
