// `crux doctor`: one screen for an operator — where the data is, who is asking, and whether it is healthy.
import { Command } from 'commander';
import { buildContext, type Context, type GlobalOptions } from '../context';
import { resolveStore } from '../store';
import { thresholdsOf } from '../thresholds';
import { emit } from '../../output/emit';
import { renderDoctor } from '../../output/doctor';
import { renderUnreachable, type UnreachableReport } from '../../output/doctor-probe';
import { ALL_STORES } from '../../domain/stores';
import { gatherDoctor, type OptionSource } from '../../domain/doctor';
import { CruxError } from '../../shared/errors';
import { VERSION } from '../version';

const sourceOf = (flag: string | undefined, envValue: string | undefined): OptionSource => (flag !== undefined ? 'flag' : envValue ? 'env' : 'none');

/** How long each step of the probe of an unusable PostgreSQL store may take. */
const PROBE_MS = 5000;

/**
 * A PostgreSQL store doctor cannot use (unreachable, or refusing the user): its report is what it could still check
 * (the URL, each host, each port, the login), printed as the document, before the error that ends the command.
 */
async function reportUnreachable(ctx: Context, globals: GlobalOptions, error: unknown): Promise<void> {
  if (!(error instanceof CruxError) || (error.kind !== 'store_unavailable' && error.kind !== 'store_refused')) return;
  const target = resolveStore(globals, ctx.env);
  if (target.kind !== 'postgres') return;
  const { parseStoreUrl } = await import('../../journal/pg/url');
  const { probeStore } = await import('../../journal/pg/probe');
  const url = parseStoreUrl(target.url, target.source === 'env' ? 'CRUX_STORE' : '--store', ctx.env);
  const checks = await probeStore(url, { timeoutMs: Math.min(ctx.lockTimeoutMs, PROBE_MS), env: ctx.env });
  const document: UnreachableReport = {
    versions: { crux: VERSION, node: process.versions.node },
    healthy: false,
    reachable: checks.some((c) => c.check === 'port' && c.status === 'ok'),
    checked_at: ctx.nowIso,
    store: { url: url.label, why: target.why ?? null, user: url.user, database: url.database, schema: url.schema },
    checks,
  };
  await emit({ ...ctx, quiet: false }, document, renderUnreachable);
}

export function makeDoctorCommand(): Command {
  return new Command('doctor')
    .description('report the data directory, identities, handoff key, journal health, stranded sessions and the lock; exit 9 when a journal is damaged')
    .addHelpText(
      'after',
      [
        '',
        'A PostgreSQL store it cannot use: the report is what it could still check (the',
        'URL as read, each host resolved, each port refused or taken, the login and its',
        'user, never the password), then exit 75 (5 when the server refuses the login).',
        '',
        'Examples:',
        '  crux doctor',
        '  crux doctor --json | jq .findings',
        '  CRUX_AGENT=build-bot crux doctor',
      ].join('\n'),
    )
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
      }).catch(async (error: unknown) => {
        await reportUnreachable(ctx, globals, error);
        throw error;
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
