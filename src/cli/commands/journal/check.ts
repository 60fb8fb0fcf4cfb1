// `crux journal check [--repair]`: verify every record, the hash chain and the sequence; exit 9 on damage.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCheck } from '../../../output/journal';
import { startProgress } from '../../../output/progress';
import { ALL_STORES } from '../../../domain/stores';
import { CruxError } from '../../../shared/errors';

export function makeCheckCommand(): Command {
  return new Command('check')
    .description('verify every record, the hash chain and the sequence; exit 9 when a journal is damaged')
    .option('--repair', 'move bad lines and torn tails into quarantine/ and re-chain the rest')
    .addHelpText('after', '\nExamples:\n  crux journal check --json\n  crux journal check --repair')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress(opts.repair ? 'repairing' : 'checking', { enabled: !ctx.quiet });
      const journals = await ctx.dataDir.check(ALL_STORES, { repair: opts.repair === true, ts: ctx.nowIso, progress: progress.sink }).finally(progress.done);
      const damaged = journals.some((j) => j.problems.length > 0 && j.repaired === undefined);
      const result = { healthy: !damaged, data_dir: ctx.dataDir.location, journals };
      await emit({ ...ctx, quiet: ctx.quiet && !damaged }, result, renderCheck);
      if (damaged) throw new CruxError('journal_damaged', 'a journal is damaged', 'see the problems above; `crux journal check --repair` quarantines them');
    });
}
