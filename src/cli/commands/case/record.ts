// `crux case record`: record a case, from flags or one JSON object on stdin, and print its id.
import { Command } from 'commander';
import { buildContext, readStdin } from '../../context';
import { emit } from '../../../output/emit';
import { recordedId, renderRecorded } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { parseCaseDraft, parseRecordJson, type CaseDraft } from '../../../domain/case/case';
import { recordCase } from '../../operations/case';

const MAX_STDIN_BYTES = 1024 * 1024;
const FIELD_FLAGS = ['task', 'action', 'outcome', 'context', 'failure', 'reward', 'receipt'] as const;
const collect = (value: string, previous: string[]) => [...previous, value];

function readDraft(opts: Record<string, any>): CaseDraft {
  if (opts.stdin) {
    const given = [...FIELD_FLAGS.filter((f) => opts[f] !== undefined), ...(opts.tag.length > 0 ? ['tag'] : [])];
    if (given.length > 0) throw usage(`give the case with --stdin or with flags, not both (--${given.join(', --')})`);
    return parseRecordJson(readStdin(MAX_STDIN_BYTES, 'standard input (the case)').toString('utf8'));
  }
  for (const flag of ['task', 'action', 'outcome'] as const) {
    if (opts[flag] === undefined) throw usage(`--${flag} is required`, 'or give the whole case as a JSON object with --stdin');
  }
  return parseCaseDraft({
    task: opts.task,
    action: opts.action,
    outcome: opts.outcome,
    context: opts.context,
    success: !opts.failure,
    reward: opts.reward,
    tags: opts.tag,
    source_receipt: opts.receipt,
  });
}

export function makeRecordCommand(): Command {
  return new Command('record')
    .description('record a case and print its id')
    .option('--task <text>', 'what was to be done (the retrieval key)')
    .option('--action <text>', 'what was done')
    .option('--outcome <text>', 'how it turned out')
    .option('--context <text>', 'the circumstances')
    .option('--failure', 'the attempt failed (success is false)')
    .option('--reward <r>', 'a number, clamped to [0,1] (default 1.0)')
    .option('--tag <tag>', 'a tag, also matched by retrieve (repeatable)', collect, [])
    .option('--receipt <text>', 'a source receipt, e.g. of the run')
    .option('--stdin', 'read one JSON object with the same fields (task, action, outcome, context, success, reward, tags, source_receipt)')
    .addHelpText('after', '\nExample:\n  crux case record --task "rotate the TLS cert" --action "certbot renew" \\\n    --outcome "renewed" --tag tls')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      await emit(ctx, await recordCase(ctx, readDraft(opts)), renderRecorded, recordedId);
    });
}
