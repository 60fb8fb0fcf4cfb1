// `crux handoff list`: minted and accepted handoffs with their status, and the keyring.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderList } from '../../../output/handoff';
import { listHandoffs } from '../../../domain/handoff/store';
import { scopeOf } from './scope';

export function makeListCommand(): Command {
  return new Command('list')
    .alias('ls')
    .description('minted and accepted handoffs with their status (outstanding, accepted, expired); the trusted and revoked Ed25519 keys')
    .addHelpText('after', '\nExample:\n  crux --json handoff list')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await listHandoffs(scopeOf(ctx)), (list, style) => renderList(list, style));
    });
}
