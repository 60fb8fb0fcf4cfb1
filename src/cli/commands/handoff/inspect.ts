// `crux handoff inspect [file]`: decode a package without trusting it, show each check, change nothing.
import { Command } from 'commander';
import { buildContext } from '../../context';
import { withWarnings, writeHuman, writeJson } from '../../../output/emit';
import { inspectJson, renderInspect } from '../../../output/handoff';
import { loadStyle } from '../../../output/style';
import { parseAgentName } from '../../../shared/ids';
import { DEFAULT_MAX_AGE_MS, inspectHandoff } from '../../../domain/handoff/store';
import { readPackage } from './envelope-io';
import { durationOr, handoffScope as scopeOf } from '../../operations/scope';

export function makeInspectCommand(): Command {
  return new Command('inspect')
    .arguments('[file]')
    .description('decode a package without trusting it; show every field and each check; change nothing (exit 6/7/8 when a check fails)')
    .option('--as <agent>', 'check the target against this receiver (default: --agent)')
    .option('--max-age <duration>', 'as for accept (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff inspect pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = opts.as !== undefined ? parseAgentName(opts.as) : ctx.agent;
      const maxAgeMs = durationOr(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const result = await inspectHandoff(scopeOf(ctx), readPackage(file), { receiver, maxAgeMs });
      if (ctx.json) writeJson(`${withWarnings(inspectJson(result), ctx.warnings)}\n`);
      else if (!ctx.quiet) writeHuman(renderInspect(result, await loadStyle(ctx)), ctx.color);
      if (result.failure !== undefined) throw result.failure;
    });
}
