// `crux journal compact`: rewrite each journal to its live records, atomically.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCompact } from '../../../output/journal';
import { startProgress } from '../../../output/progress';
import { ALL_STORES } from '../../../domain/stores';

export function makeCompactCommand(): Command {
  return new Command('compact')
    .description('rewrite each journal to its live records (atomic; the old journal, chain intact, moves into history/)')
    .option('--drop-history', 'delete history/ at once (session history and get --at then reach back only to this compaction)')
    .addHelpText(
      'after',
      '\nA journal with nothing dead is left as it is; history/ keeps each record\nonce, CRUX_HISTORY_KEEP (default 30d) and at most CRUX_HISTORY_MAX_BYTES\n(default 256 MiB).\n\nExamples:\n  crux journal compact --json\n  crux journal compact --drop-history',
    )
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress('compacting', { enabled: !ctx.quiet });
      const journals = await ctx.dataDir.compact(ALL_STORES, ctx.nowIso, progress.sink, { dropHistory: opts.dropHistory === true }).finally(progress.done);
      await emit(ctx, { journals }, renderCompact);
    });
}
