// `crux handoff list`: minted and accepted handoffs with their status.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderList } from '../../../output/handoff';
import { listHandoffs } from '../../../domain/handoff/store';
import { scopeOf } from './scope';

export function makeListCommand(): Command {
  return new Command('list')
    .alias('ls')
    .description('minted and accepted handoffs with their status (outstanding, accepted, expired)')
    .addHelpText('after', '\nExample:\n  crux --json handoff list')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const rows = await listHandoffs(scopeOf(ctx));
      await emit(ctx, { handoffs: rows }, ({ handoffs }, style) => renderList(handoffs, style));
    });
}
