// `crux case list`: every case, in the order they were written.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderCaseList } from '../../../output/case';
import { listCases } from '../../../domain/case/store';
import { scopeOf } from './scope';

export function makeListCommand(): Command {
  return new Command('list')
    .alias('ls')
    .description('every case, in the order they were written')
    .addHelpText('after', '\nExample:\n  crux --json case list')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, { cases: await listCases(scopeOf(ctx)) }, renderCaseList);
    });
}
