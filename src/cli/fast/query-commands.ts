// The query fast path's commands: `session list` and `case retrieve`, each with its own options as its commander
// definition has them (commands/session/list.ts, commands/list-options.ts, commands/case/retrieve.ts;
// test/unit/cli/fast-path.test.ts holds them to it), and the code both run (run-list.ts, run-retrieve.ts).
import { runList, type ListOptions } from '../commands/session/run-list';
import { runRetrieve, type RetrieveOptions } from '../commands/case/run-retrieve';
import { flagOption as flag, valueOption as value, type FastCommand } from './parse';

export const QUERY_COMMANDS: readonly FastCommand<any>[] = [
  {
    path: ['session', 'list'],
    aliases: ['ls'],
    operands: [0, 0],
    options: {
      '--all': flag('all'),
      '--archived': flag('archived'),
      '--stranded': flag('stranded'),
      '--all-agents': flag('allAgents'),
      '--status': { attribute: 'status', takesValue: true, repeatable: true },
      '--fresh-for': value('freshFor'),
      '--stale-after': value('staleAfter'),
      '--limit': value('limit'),
      '--sort': value('sort'),
      '--no-headers': flag('headers', false),
    },
    defaults: { '--no-headers': true },
    run: (_, opts: ListOptions, globals) => runList(opts, globals),
  },
  {
    path: ['case', 'retrieve'],
    operands: [1, Infinity],
    options: {
      '--top-k': value('topK'),
      '--limit': value('limit'),
      '--only-success': flag('onlySuccess'),
      '--min-similarity': value('minSimilarity'),
      '--mark-reused': flag('markReused'),
      '--no-headers': flag('headers', false),
    },
    defaults: { '--no-headers': true },
    run: (words, opts: RetrieveOptions, globals) => runRetrieve(words, opts, globals),
  },
];
