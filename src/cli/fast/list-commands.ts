// The list's fast path's command (dist/fast-list.cjs): `session list`, with its options as its commander definition
// has them (commands/session/list.ts, commands/list-options.ts; test/unit/cli/fast-path.test.ts holds it to it), and
// the code both run (run-list.ts). A file of its own, apart from the retrieve's (retrieve-commands.ts), so that
// neither bundle carries the other's code.
import { runList, type ListOptions } from '../commands/session/run-list';
import { flagOption as flag, valueOption as value, type FastCommand } from './parse';

export const LIST_COMMANDS: readonly FastCommand<any>[] = [
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
];
