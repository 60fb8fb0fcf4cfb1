// `journal check` as every adapter runs it (CLI, MCP): the `--json` document (SPEC §8) and whether it is damaged.
import type { Context } from '../context';
import { ALL_STORES } from '../../domain/stores';
import { CruxError } from '../../shared/errors';
import { surveySecrets } from '../../journal/core/secret-survey';

type CheckOptions = Parameters<Context['dataDir']['check']>[1];

export async function checkJournals(ctx: Context, opts: Omit<CheckOptions, 'ts'>) {
  const journals = await ctx.dataDir.check(ALL_STORES, { ...opts, ts: ctx.nowIso });
  // A journal, or its history/, with problems a repair did not take care of.
  const damaged = journals.some(
    (j) =>
      (j.problems.length > 0 && j.repaired === undefined) ||
      (j.history !== undefined && j.history.problems.length > 0 && j.history.quarantined === undefined) ||
      (j.derived !== undefined && j.derived.rebuilt !== true),
  );
  // The records that hold a secret (SPEC §7): reported, never a value, and no damage (no exit code of their own).
  const secrets = await surveySecrets(ctx.dataDir, ALL_STORES);
  return { healthy: !damaged, data_dir: ctx.dataDir.location, journals, secrets };
}

export const journalDamaged = () =>
  new CruxError(
    'journal_damaged',
    'a journal is damaged',
    'the report names each problem (with --json, in the document); `crux journal check --repair` quarantines them',
  );
