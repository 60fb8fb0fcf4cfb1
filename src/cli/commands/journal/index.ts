// `crux journal …`: the group and its commands, one factory each (add a command: a factory, here or in a file of
// its own, and a line in COMMANDS).
import { Command } from 'commander';
import { makeGroup } from '../group';
import { buildContext } from '../../context';
import { openStore, targetOf } from '../../store';
import { emit } from '../../../output/emit';
import { renderCheck, renderCompact, renderCopy, renderRedact } from '../../../output/journal';
import { startProgress } from '../../../output/progress';
import { ALL_STORES } from '../../../domain/stores';
import { copyStore } from '../../../journal/core/copy';
import { checkJournals, journalDamaged, redactJournals } from '../../operations/journal';
import { makeDecryptCommand, makeEncryptCommand, makeRekeyCommand } from './encrypt';

/** Every record, the hash chain and the sequence verified; exit 9 on damage. */
const makeCheckCommand = () =>
  new Command('check')
    .description('verify every record, the hash chain and the sequence; exit 9 when a journal is damaged')
    .option('--repair', 'move bad lines and torn tails into quarantine/ and re-chain the rest')
    .addHelpText('after', '\nExamples:\n  crux journal check --json\n  crux journal check --repair')
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress(opts.repair ? 'repairing' : 'checking', { enabled: !ctx.quiet });
      const result = await checkJournals(ctx, { repair: opts.repair === true, progress: progress.sink }).finally(progress.done);
      await emit({ ...ctx, quiet: ctx.quiet && result.healthy }, result, renderCheck);
      if (!result.healthy) throw journalDamaged();
    });

const makeCompactCommand = () =>
  new Command('compact')
    .description('rewrite each journal to its live records (atomic; the old journal, chain intact, moves into history/)')
    .option('--drop-history', 'delete history/ at once (session history and get --at then reach back only to this compaction)')
    .addHelpText(
      'after',
      '\nA journal with nothing dead is left as it is; history/ keeps each record\nonce, CRUX_HISTORY_KEEP (default 30d) and at most CRUX_HISTORY_MAX_BYTES\n(default 256 MiB).\n\nExamples:\n  crux journal compact --json\n  crux journal compact --drop-history',
    )
    .action(async (opts, command: Command) => {
      const ctx = buildContext(command);
      const progress = startProgress('compacting', { enabled: !ctx.quiet });
      const journals = await ctx.dataDir.compact(ALL_STORES, ctx.nowIso, progress.sink, { dropHistory: opts.dropHistory === true }).finally(progress.done);
      await emit(ctx, { journals }, renderCompact);
    });

/** A store moved to another kind (a data directory into PostgreSQL, and back). */
const makeCopyCommand = () =>
  new Command('copy')
    .description('copy every journal, record for record, and the keys into an empty store (a data directory or postgres:// URL)')
    .requiredOption('--to <dir|url>', 'the empty store to copy into: a directory path, or postgres://user@host/db[?schema=name]')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  # this data directory into PostgreSQL, then PostgreSQL into a directory:',
        '  crux journal copy --to postgres://crux@db.internal/agents',
        '  crux --store postgres://crux@db.internal/agents journal copy --to ./backup',
      ].join('\n'),
    )
    .action(async (opts: { to: string }, command: Command) => {
      const ctx = buildContext(command);
      const target = openStore(targetOf(opts.to), { warn: ctx.warn }, ctx.lockTimeoutMs);
      await emit(ctx, { copied: await copyStore(ctx.dataDir, target, ALL_STORES) }, renderCopy);
    });

/** Every secret the store already keeps removed (SPEC §7). */
const makeRedactCommand = () =>
  new Command('redact')
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
      await emit(ctx, await redactJournals(ctx, { states: opts.states === true, dryRun: opts.dryRun === true }), renderRedact);
    });

const COMMANDS = {
  check: makeCheckCommand,
  compact: makeCompactCommand,
  copy: makeCopyCommand,
  redact: makeRedactCommand,
  encrypt: makeEncryptCommand,
  rekey: makeRekeyCommand,
  decrypt: makeDecryptCommand,
};

export function makeJournalCommand(wanted?: string): Command {
  return makeGroup('journal', 'verify, repair, compact, copy, redact, encrypt, rekey and decrypt the journals', COMMANDS, wanted);
}
