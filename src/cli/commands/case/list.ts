// `crux case list`: every case, newest first; filtered, sorted, limited.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { addListOptions, collect } from '../list-options';
import { listLimit } from '../../list-limit';
import { parseSort } from '../../parse';
import { emit } from '../../../output/emit';
import { caseIds, renderCaseList } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { CASE_ORDERS } from '../../../domain/list-window';
import { countedCases } from '../../operations/case';
import { stdoutIsTerminal } from '../../../output/terminal';

export function makeListCommand(): Command {
  const command = new Command('list')
    .alias('ls')
    .description('every case, newest first')
    .option('--only-success', 'only successful cases')
    .option('--only-failure', 'only failed cases')
    .option('--tag <tag>', 'only cases with this tag (repeatable: all of them)', collect);
  return addListOptions(command, CASE_ORDERS, 'newest first')
    .addHelpText('after', '\nExamples:\n  crux --json case list\n  crux case list --only-failure --sort created --limit 20')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.onlySuccess && opts.onlyFailure) throw usage('give --only-success or --only-failure, not both');
      const success = opts.onlySuccess ? true : opts.onlyFailure ? false : undefined;
      const window = { sort: parseSort(opts.sort, CASE_ORDERS), limit: listLimit(opts.limit, ctx) };
      // How many matched (for the line that ends a list cut short) is the table's, not the document's.
      // Only a terminal shows it: elsewhere a limited list by tag reads the cases it shows, not every tagged one.
      const count = !ctx.json && !ctx.quiet && stdoutIsTerminal();
      const { document, total } = await countedCases(ctx, { success, tags: opts.tag }, window, { count });
      await emit({ ...ctx, headers: opts.headers }, document, (r, style) => renderCaseList({ ...r, total }, style), caseIds);
    });
}
