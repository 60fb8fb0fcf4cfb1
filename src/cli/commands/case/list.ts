// `crux case list`: every case, in the order they were written; filtered, sorted, limited.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { addListOptions, collect, parseLimit, parseSort } from '../list-options';
import { emit } from '../../../output/emit';
import { renderCaseList } from '../../../output/case';
import { usage } from '../../../shared/errors';
import type { Case } from '../../../domain/case/case';
import { listCases } from '../../../domain/case/store';
import { applyWindow, CASE_ORDERS } from '../../../domain/list-window';
import { caseScope as scopeOf } from '../../operations/scope';

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
      const tags: string[] = opts.tag ?? [];
      const success = opts.onlySuccess ? true : opts.onlyFailure ? false : undefined;
      const where = success === undefined && tags.length === 0 ? undefined : (c: Case) => (success === undefined || c.success === success) && tags.every((t) => c.tags.includes(t));
      const cases = applyWindow(await listCases(scopeOf(ctx)), CASE_ORDERS, { sort: parseSort(opts.sort, CASE_ORDERS), limit: parseLimit(opts.limit), where });
      await emit(ctx, { cases }, renderCaseList);
    });
}
