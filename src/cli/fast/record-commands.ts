// `case record`'s fast path's command (dist/fast-record.cjs), with its options as its commander definition has them
// (commands/case/record.ts; test/unit/cli/fast-path.test.ts holds it to it), and the code both run
// (commands/case/run-record.ts). A file of its own, so that the sessions' bundles carry none of the cases' code.
import { runRecord, type RecordOptions } from '../commands/case/run-record';
import { flagOption as flag, valueOption as value, type FastCommand } from './parse';

export const RECORD_COMMANDS: readonly FastCommand<any>[] = [
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
