// `crux journal copy --to <dir|url>`: move a store to another kind (a data directory into PostgreSQL, and back).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { openStore, targetOf } from '../../store';
import { emit } from '../../../output/emit';
import { renderCopy } from '../../../output/journal';
import { ALL_STORES } from '../../../domain/stores';
import { copyStore } from '../../../journal/core/copy';

export function makeCopyCommand(): Command {
  return new Command('copy')
    .description('copy every journal, record for record, and the keys into an empty store (a data directory or postgres:// URL)')
    .requiredOption('--to <dir|url>', 'the empty store to copy into: a directory path, or postgres://user@host/db[?schema=name]')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  # this data directory into PostgreSQL, then PostgreSQL into a directory:',
        '  crux journal copy --to postgres://crux@db.internal/agents',
        '  crux --store postgres://crux@db.internal/agents journal copy --to ./backup',
      ].join('\n'),
    )
    .action(async (opts: { to: string }, command: Command) => {
      const ctx = buildContext(command);
      const target = openStore(targetOf(opts.to), { warn: ctx.warn }, ctx.lockTimeoutMs);
      const copied = await copyStore(ctx.dataDir, target, ALL_STORES);
      await emit(ctx, { copied }, renderCopy);
    });
}
