// `crux journal compact`: rewrite each journal to its live records, atomically.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCompact } from '../../../output/journal';
import { startProgress } from '../../../output/progress';
import { ALL_STORES } from '../../../domain/stores';

export function makeCompactCommand(): Command {
  return new Command('compact')
    .description('rewrite each journal to its live records (atomic; the old chain head is kept in a snapshot record)')
    .addHelpText('after', '\nExample:\n  crux journal compact --json')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress('compacting', { enabled: !ctx.quiet });
      const journals = await ctx.dataDir.compact(ALL_STORES, ctx.nowIso, progress.sink).finally(progress.done);
      await emit(ctx, { journals }, renderCompact);
    });
}
