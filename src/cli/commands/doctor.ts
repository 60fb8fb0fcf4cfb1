// `crux doctor`: one screen for an operator — where the data is, who is asking, and whether it is healthy.
import type { Command } from 'commander';
import { buildContext, type GlobalOptions } from '../context';
import { emit } from '../../output/emit';
import { renderDoctor } from '../../output/doctor';
import { ALL_STORES } from '../../domain/stores';
import { gatherDoctor, type OptionSource } from '../../domain/doctor';
import { DEFAULT_THRESHOLDS, type FreshnessThresholds } from '../../domain/session/freshness';
import { CruxError } from '../../shared/errors';
import { parseDuration } from '../../shared/time';

const sourceOf = (flag: string | undefined, envValue: string | undefined): OptionSource =>
  flag !== undefined ? 'flag' : envValue ? 'env' : 'none';

/** Stranded means stale by the same thresholds `session list` uses (CRUX_FRESH_FOR, CRUX_STALE_AFTER, CRUX_CLOCK_SKEW). */
function thresholdsFromEnv(env: NodeJS.ProcessEnv): FreshnessThresholds {
  const pick = (name: string, fallback: number) => (env[name] ? parseDuration(env[name]!, name) : fallback);
  return {
    freshMs: pick('CRUX_FRESH_FOR', DEFAULT_THRESHOLDS.freshMs),
    staleMs: pick('CRUX_STALE_AFTER', DEFAULT_THRESHOLDS.staleMs),
    skewMs: pick('CRUX_CLOCK_SKEW', DEFAULT_THRESHOLDS.skewMs),
  };
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description('report the data directory, identities, handoff key, journal health, stranded sessions and the lock; exit 9 when a journal is damaged')
    .addHelpText('after', '\nExamples:\n  crux doctor\n  crux doctor --json | jq .findings\n  CRUX_AGENT=build-bot crux doctor')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const globals = command.optsWithGlobals<GlobalOptions>();
      const report = await gatherDoctor({
        dir: ctx.dataDir,
        dataDirSource: ctx.dataDirSource,
        agent: ctx.agent,
        agentSource: sourceOf(globals.agent, ctx.env.CRUX_AGENT),
        actor: ctx.actor,
        actorSource: sourceOf(globals.actor, ctx.env.CRUX_ACTOR),
        env: ctx.env,
        now: ctx.now,
        stores: ALL_STORES,
        thresholds: thresholdsFromEnv(ctx.env),
      });
      await emit({ ...ctx, quiet: ctx.quiet && report.healthy }, report, renderDoctor);
      if (!report.healthy) {
        throw new CruxError('journal_damaged', 'the data directory is damaged', 'see the findings above; `crux journal check --repair` quarantines bad lines');
      }
    });
}
