// `crux journal redact [--states] [--dry-run]`: remove every secret the store already keeps (SPEC §7).
import { Command } from 'commander';
import { buildContext } from '../../context';
import { emit } from '../../../output/emit';
import { renderRedact } from '../../../output/journal';
import { redactJournals } from '../../operations/journal';

export function makeRedactCommand(): Command {
  return new Command('redact')
    .description('replace every secret the store keeps with [redacted:KIND] (journals, history, cache, quarantine), re-chained, all at once')
    .option('--states', 'redact session states too (each JSON string value that holds a secret, in place: the state stays JSON)')
    .option('--dry-run', 'say what would be redacted, and write nothing')
    .addHelpText(
      'after',
      [
        '',
        'Free text is always redacted; session states only with --states. Prints, by',
        'journal and kind, how many records held a secret (never the value). Packages',
        'already handed to other hosts are beyond it.',
        '',
        'Examples:',
        '  crux journal redact --dry-run',
        '  crux journal redact --states --json',
      ].join('\n'),
    )
    .action(async (opts: { states?: boolean; dryRun?: boolean }, command: Command) => {
      const ctx = buildContext(command);
      const result = await redactJournals(ctx, { states: opts.states === true, dryRun: opts.dryRun === true });
      await emit(ctx, result, renderRedact);
    });
}
