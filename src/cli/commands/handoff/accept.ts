// `crux handoff accept [file]`: verify a package, then store its session under the receiver, and its facts.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderAccepted } from '../../../output/handoff';
import { DEFAULT_MAX_AGE_MS } from '../../../domain/handoff/store';
import { accept } from '../../operations/handoff';
import { readPackage } from './envelope-io';
import { agentOf, durationOr } from '../../operations/scope';

export function makeAcceptCommand(): Command {
  return new Command('accept')
    .arguments('[file]')
    .description('verify a package (file or - for stdin), then store its session under the receiver and its facts')
    .option('--as <agent>', 'the receiving agent (default: --agent)')
    .option('--max-age <duration>', 'how old a package without expires_at (a daemon package) may be (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff accept pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = agentOf(opts.as, ctx, '--as');
      const maxAgeMs = durationOr(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const { document, result } = await accept(ctx, readPackage(file), { receiver, maxAgeMs });
      await emit(ctx, document, () => renderAccepted(result));
    });
}
