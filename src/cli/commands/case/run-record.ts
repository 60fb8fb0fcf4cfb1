// What `case record` does once its command line is parsed: commander's action (record.ts) and the fast path
// (cli/fast) both call it, so either way the command runs the same code.
import { contextOf, readStdin, type GlobalOptions } from '../../context';
import { emit } from '../../../output/emit';
import { recordedId, renderRecorded } from '../../../output/case';
import { usage } from '../../../shared/errors';
import { parseCaseDraft, parseRecordJson, type CaseDraft } from '../../../domain/case/case';
import { recordCase } from '../../operations/case';

const MAX_STDIN_BYTES = 1024 * 1024;
const FIELD_FLAGS = ['task', 'action', 'outcome', 'context', 'failure', 'reward', 'receipt'] as const;

/** The command's options by commander's attribute names: the text fields, --failure and --stdin, the tags. */
export type RecordOptions = Readonly<Record<string, any>> & { readonly tag: readonly string[] };

function readDraft(opts: RecordOptions): CaseDraft {
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

export async function runRecord(opts: RecordOptions, globals: GlobalOptions): Promise<void> {
  const ctx = contextOf(globals);
  await emit(ctx, await recordCase(ctx, readDraft(opts)), renderRecorded, recordedId);
}
