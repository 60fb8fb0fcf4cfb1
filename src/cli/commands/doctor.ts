// `crux doctor`: one screen for an operator — where the data is, who is asking, and whether it is healthy.
import { Command } from 'commander';
import { buildContext, type GlobalOptions } from '../context';
import { thresholdsOf } from '../thresholds';
import { emit } from '../../output/emit';
import { renderDoctor } from '../../output/doctor';
import { ALL_STORES } from '../../domain/stores';
import { gatherDoctor, type OptionSource } from '../../domain/doctor';
import { CruxError } from '../../shared/errors';
import { VERSION } from '../version';

const sourceOf = (flag: string | undefined, envValue: string | undefined): OptionSource => (flag !== undefined ? 'flag' : envValue ? 'env' : 'none');

export function makeDoctorCommand(): Command {
  return new Command('doctor')
    .description('report the data directory, identities, handoff key, journal health, stranded sessions and the lock; exit 9 when a journal is damaged')
    .addHelpText('after', '\nExamples:\n  crux doctor\n  crux doctor --json | jq .findings\n  CRUX_AGENT=build-bot crux doctor')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const globals = command.optsWithGlobals<GlobalOptions>();
      const report = await gatherDoctor({
        dir: ctx.dataDir,
        dataDirSource: ctx.dataDirSource,
        storeWhy: ctx.storeWhy,
        agent: ctx.agent,
        agentSource: sourceOf(globals.agent, ctx.env.CRUX_AGENT),
        actor: ctx.actor,
        actorSource: sourceOf(globals.actor, ctx.env.CRUX_ACTOR),
        env: ctx.env,
        now: ctx.now,
        stores: ALL_STORES,
        // Stranded means stale by the thresholds `session list` uses.
        thresholds: thresholdsOf(ctx.env),
      });
      // crux's and Node's versions first: what an operator quotes in a bug report.
      const document = { versions: { crux: VERSION, node: process.versions.node }, ...report };
      await emit({ ...ctx, quiet: ctx.quiet && report.healthy }, document, renderDoctor);
      if (!report.healthy) {
        throw new CruxError(
          'journal_damaged',
          'the data directory is damaged',
          'the report names each finding (with --json, in the document); `crux journal check --repair` quarantines bad lines',
        );
      }
    });
}
