// `crux session close <id>`: close a session exactly once, with an outcome and a summary.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderClose } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { invalid } from '../../../shared/errors';
import { closeSession } from '../../../domain/session/store';
import { scopeOf } from './scope';

const CLOSE_OUTCOMES = ['completed', 'failed', 'abandoned'] as const;

export function makeCloseCommand(): Command {
  return new Command('close')
    .arguments('<id>')
    .description('close a session exactly once; closing a closed session reports the original close (exit 0)')
    .option('--outcome <outcome>', `how it ended: ${CLOSE_OUTCOMES.join(' | ')}`, 'completed')
    .option('--summary <text>', 'a closing note (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session close build-42 --outcome failed --summary "tests red"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const id = parseLogicalSessionId(rawId);
      if (!(CLOSE_OUTCOMES as readonly string[]).includes(opts.outcome)) {
        throw invalid(`--outcome must be one of ${CLOSE_OUTCOMES.join(', ')}: ${JSON.stringify(opts.outcome)}`, 'expired is the reaper\'s');
      }
      const result = await closeSession(scopeOf(ctx), id, { outcome: opts.outcome, summary: opts.summary });
      await emit(ctx, result, sentence(renderClose));
    });
}
