// `crux journal check [--repair]`: verify every record, the hash chain and the sequence; exit 9 on damage.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCheck } from '../../../output/journal';
import { startProgress } from '../../../output/progress';
import { checkJournals, journalDamaged } from '../../operations/journal';

export function makeCheckCommand(): Command {
  return new Command('check')
    .description('verify every record, the hash chain and the sequence; exit 9 when a journal is damaged')
    .option('--repair', 'move bad lines and torn tails into quarantine/ and re-chain the rest')
    .addHelpText('after', '\nExamples:\n  crux journal check --json\n  crux journal check --repair')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress(opts.repair ? 'repairing' : 'checking', { enabled: !ctx.quiet });
      const result = await checkJournals(ctx, { repair: opts.repair === true, progress: progress.sink }).finally(progress.done);
      await emit({ ...ctx, quiet: ctx.quiet && result.healthy }, result, renderCheck);
      if (!result.healthy) throw journalDamaged();
    });
}
