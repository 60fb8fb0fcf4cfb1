// The retrieve's fast path's command (dist/fast-retrieve.cjs): `case retrieve`, with its options as its commander
// definition has them (commands/case/retrieve.ts; test/unit/cli/fast-path.test.ts holds it to it), and the code both
// run (run-retrieve.ts). A file of its own, apart from the list's (list-commands.ts).
import { runRetrieve, type RetrieveOptions } from '../commands/case/run-retrieve';
import { flagOption as flag, valueOption as value, type FastCommand } from './parse';

export const RETRIEVE_COMMANDS: readonly FastCommand<any>[] = [
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
