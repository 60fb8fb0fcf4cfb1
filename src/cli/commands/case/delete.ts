// `crux case delete <id> --yes`: remove a case outright.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderDeleted } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { parseCaseId } from '../../../shared/ids';
import { deleteCase } from '../../../domain/case/store';
import { caseScope as scopeOf } from '../../operations/scope';

export function makeDeleteCommand(): Command {
  return new Command('delete')
    .arguments('<id>')
    .description('remove a case outright (irreversible; needs --yes)')
    .option('--yes', 'really delete')
    .addHelpText('after', '\nExample:\n  crux case delete c_5f0c2a9e1b7d4c3a2f1e0d9c --yes')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.yes !== true) throw usage(`deleting case ${rawId} is irreversible: add --yes`);
      await emit(ctx, await deleteCase(scopeOf(ctx), parseCaseId(rawId)), renderDeleted);
    });
}
