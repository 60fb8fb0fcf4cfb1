// The writes' fast path's commands (dist/fast.cjs): `session put|close` and `case record`, each with its own
// options as its commander definition has them (commands/session/*.ts, commands/case/record.ts;
// test/unit/cli/fast-path.test.ts holds them to it), and the code both run (commands/session/run.ts,
// commands/case/run-record.ts). The get's is read-commands.ts, in a file of its own: a table's option helpers are
// calls, which esbuild keeps wherever their file is bundled, and with them every command the table names.
import { runClose, runPut } from '../commands/session/run';
import { runRecord, type RecordOptions } from '../commands/case/run-record';
import { flagOption as flag, valueOption as value, type FastCommand } from './parse';

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
  {
    path: ['case', 'record'],
    operands: [0, 0],
    options: {
      '--task': value('task'),
      '--action': value('action'),
      '--outcome': value('outcome'),
      '--context': value('context'),
      '--failure': flag('failure'),
      '--reward': value('reward'),
      '--tag': { attribute: 'tag', takesValue: true, repeatable: true },
      '--receipt': value('receipt'),
      '--stdin': flag('stdin'),
    },
    defaults: { '--tag': [] },
    run: (_, opts: RecordOptions, globals) => runRecord(opts, globals),
  },
];
