// `journal check` and `journal redact` as every adapter runs them (CLI, MCP): the `--json` documents (SPEC §7, §8).
import type { Context } from '../context';
import { ALL_STORES } from '../../domain/stores';
import { CruxError } from '../../shared/errors';
import { SecretTally } from '../../journal/core/secret-survey';
import { redactStore } from '../../journal/core/redact-store';

type CheckOptions = Parameters<Context['dataDir']['check']>[1];

export async function checkJournals(ctx: Context, opts: Omit<CheckOptions, 'ts'>) {
  // The records that hold a secret (SPEC §7), counted in check's own scan: reported, never a value, and no damage.
  const secrets = new SecretTally();
  const journals = await ctx.dataDir.check(ALL_STORES, { ...opts, ts: ctx.nowIso, secrets });
  // A journal, or its history/, with problems a repair did not take care of.
  const damaged = journals.some(
    (j) =>
      (j.problems.length > 0 && j.repaired === undefined) ||
      (j.history !== undefined && j.history.problems.length > 0 && j.history.quarantined === undefined) ||
      (j.derived !== undefined && j.derived.rebuilt !== true),
  );
  return { healthy: !damaged, data_dir: ctx.dataDir.location, journals, secrets: secrets.list() };
}

export const journalDamaged = () =>
  new CruxError(
    'journal_damaged',
    'a journal is damaged',
    'the report names each problem (with --json, in the document); `crux journal check --repair` quarantines them',
  );

/** What `journal redact` says of what it cannot reach (SPEC §7). */
const PACKAGES_BEYOND = 'packages already handed to other hosts (handoff mint/export) are beyond it: rotate any secret they held';

/** `journal redact [--states] [--dry-run]` as every adapter runs it: the `--json` document (SPEC §7). */
export async function redactJournals(ctx: Context, opts: { states: boolean; dryRun: boolean }) {
  const report = await redactStore(ctx.dataDir, ALL_STORES, ctx.nowIso, opts);
  return {
    data_dir: ctx.dataDir.location,
    dry_run: opts.dryRun,
    states: opts.states,
    redacted: report.redacted,
    quarantine: report.quarantine,
    note: PACKAGES_BEYOND,
  };
}
