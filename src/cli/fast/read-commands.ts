// The get's fast path's command (dist/fast-read.cjs): `session get`, with its options as its commander definition
// has them (commands/session/state.ts; test/unit/cli/fast-path.test.ts holds it to it), and the code both run
// (commands/session/run.ts). A file of its own, apart from the writes' (commands.ts), so that the get's bundle
// carries none of their code.
import { runGet } from '../commands/session/run';
import { valueOption as value, type FastCommand } from './parse';

type Options = Record<string, string | undefined>;

export const READ_COMMANDS: readonly FastCommand<any>[] = [
  {
    path: ['session', 'get'],
    operands: [1, 1],
    options: { '--at': value('at') },
    run: ([id], opts: Options, globals) => runGet(id!, opts, globals),
  },
];
