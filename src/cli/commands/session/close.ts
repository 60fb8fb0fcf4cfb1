// `crux session close <id>`: close a session exactly once, with an outcome and a summary.
import { Command, Option } from 'commander';
import { completingWith } from '../group';
import { buildContext } from '../../context';
import { emit, sentence } from '../../../output/emit';
import { renderClose } from '../../../output/session';
import { parseLogicalSessionId } from '../../../shared/ids';
import { closeSession, CLOSE_OUTCOMES, parseCloseOutcome } from '../../operations/session';

export function makeCloseCommand(): Command {
  return new Command('close')
    .arguments('<id>')
    .description('close a session exactly once; closing a closed session reports the original close (exit 0)')
    .addOption(completingWith(new Option('--outcome <outcome>', `how it ended: ${CLOSE_OUTCOMES.join(' | ')}`).default('completed'), CLOSE_OUTCOMES))
    .option('--summary <text>', 'a closing note (credentials in URLs are removed)')
    .addHelpText('after', '\nExample:\n  crux session close build-42 --outcome failed --summary "tests red"')
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const id = parseLogicalSessionId(rawId);
      const result = await closeSession(ctx, id, { outcome: parseCloseOutcome(opts.outcome), summary: opts.summary });
      await emit(ctx, result, sentence(renderClose));
    });
}
