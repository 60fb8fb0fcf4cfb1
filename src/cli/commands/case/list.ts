// `crux case list`: every case, in the order they were written; filtered, sorted, limited.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { addListOptions, collect, parseLimit, parseSort } from '../list-options';
import { emit } from '../../../output/emit';
import { renderCaseList } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { CASE_ORDERS } from '../../../domain/list-window';
import { listCases } from '../../operations/case';

export function makeListCommand(): Command {
  const command = new Command('list')
    .alias('ls')
    .description('every case, in the order they were written')
    .option('--only-success', 'only successful cases')
    .option('--only-failure', 'only failed cases')
    .option('--tag <tag>', 'only cases with this tag (repeatable: all of them)', collect);
  return addListOptions(command, CASE_ORDERS, 'the order they were written')
    .addHelpText('after', '\nExamples:\n  crux --json case list\n  crux case list --only-failure --sort -created --limit 20')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.onlySuccess && opts.onlyFailure) throw usage('give --only-success or --only-failure, not both');
      const success = opts.onlySuccess ? true : opts.onlyFailure ? false : undefined;
      const window = { sort: parseSort(opts.sort, CASE_ORDERS), limit: parseLimit(opts.limit) };
      await emit(ctx, await listCases(ctx, { success, tags: opts.tag }, window), renderCaseList);
    });
}
