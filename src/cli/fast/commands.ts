// The session writes' fast path's commands (dist/fast.cjs): `session put|close`, each with its own options as its
// commander definition has them (commands/session/*.ts; test/unit/cli/fast-path.test.ts holds them to it), and the
// code both run (commands/session/run.ts). The get's (read-commands.ts) and `case record`'s (record-commands.ts)
// are in files of their own: a table's option helpers are calls, which esbuild keeps wherever their file is
// bundled, and with them every command the table names.
import { runClose, runPut } from '../commands/session/run';
import { valueOption as value, type FastCommand } from './parse';

type Options = Record<string, string | undefined>;

export const WRITE_COMMANDS: readonly FastCommand<any>[] = [
  {
    path: ['session', 'put'],
    operands: [1, 2],
    options: {
      '--file': value('file'),
      '--ttl': value('ttl'),
      '--expires-at': value('expiresAt'),
      '--tokens': value('tokens'),
      '--add-tokens': value('addTokens'),
      '--max-tokens': value('maxTokens'),
    },
    run: ([id, json], opts: Options, globals) => runPut(id!, json, opts, globals),
  },
  {
    path: ['session', 'close'],
    operands: [1, 1],
    options: { '--outcome': value('outcome'), '--summary': value('summary') },
    defaults: { '--outcome': 'completed' },
    run: ([id], opts: Options, globals) => runClose(id!, opts, globals),
  },
];
