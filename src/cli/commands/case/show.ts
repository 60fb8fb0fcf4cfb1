// `crux case show <id>`: one case, every field.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCase } from '../../../output/case';
import { parseCaseId } from '../../../shared/ids';
import { showCase } from '../../operations/case';

export function makeShowCommand(): Command {
  return new Command('show')
    .arguments('<id>')
    .description('one case, every field')
    .addHelpText('after', '\nExample:\n  crux case show c_5f0c2a9e1b7d4c3a2f1e0d9c')
    .action(async (rawId: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await showCase(ctx, parseCaseId(rawId)), renderCase);
    });
}
