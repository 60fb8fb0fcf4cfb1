// `crux session delete <id> --yes`: remove a session irreversibly, whatever its state.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderDeleted } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { usage } from '../../../shared/errors';
import { deleteSession } from '../../../domain/session/store';
import { sessionScope as scopeOf } from '../../operations/scope';

export function makeDeleteCommand(): Command {
  return new Command('delete')
    .arguments('<id>')
    .description('remove a session irreversibly, whatever its state (needs --yes)')
    .option('--yes', 'confirm the irreversible removal')
    .addHelpText('after', '\nExample:\n  crux session delete build-42 --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage('delete is irreversible: add --yes to confirm', 'or archive it instead: `crux session archive <id>`');
      const result = await deleteSession(scopeOf(ctx), parseLogicalSessionId(rawId));
      await emit(ctx, result, sentence(renderDeleted));
    });
}
