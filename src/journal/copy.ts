// `journal copy`: every journal of one store, record for record, with its history and key items, from one
// consistent view of the source (its lock, or one read-only repeatable-read transaction), into an empty store of
// either kind.
import { CruxError } from '../shared/errors';
import type { JournalStore } from './store-boundary';
import type { StoreSpec } from './store-spec';

export interface CopyReport {
  readonly from: string;
  readonly to: string;
  readonly journals: { name: string; file: string; records: number }[];
  readonly keys: string[];
}

/**
 * Copies `specs`' journals and every key item from `source` into `target`, which must hold no records and no
 * keys. The source must verify (a damaged line has no place in a table): `journal check --repair` first.
 * Each journal arrives whole or not at all; the target is checked afterwards.
 */
export async function copyStore(source: JournalStore, target: JournalStore, specs: readonly StoreSpec<unknown>[], ts: string): Promise<CopyReport> {
  if (source.location === target.location) throw new CruxError('usage', `--to names the store being copied (${source.location})`, 'name another store');
  const checked = await source.check(specs, { repair: false, ts });
  const damaged = checked.find((j) => j.problems.length > 0);
  if (damaged !== undefined) {
    const first = damaged.problems[0]!;
    throw new CruxError(
      'journal_damaged',
      `${source.location}: ${damaged.file} line ${first.line}: ${first.reason}; nothing was copied`,
      'run `crux journal check --repair` on the source first',
    );
  }
  const existing = await target.check(specs, { repair: false, ts });
  const occupied = existing.find((j) => j.records > 0 || j.problems.length > 0);
  const targetKeys = await target.keys.list();
  if (occupied !== undefined || targetKeys.length > 0) {
    const what = occupied !== undefined ? `${occupied.file} has records` : `it has key items (${targetKeys.join(', ')})`;
    throw new CruxError(
      'conflict',
      `${target.location} is not empty: ${what}; nothing was copied`,
      'copy into an empty store (a new directory, or a new ?schema=)',
    );
  }
  const keys = await source.keys.list();
  for (const name of keys) {
    const bytes = await source.keys.read(name);
    if (bytes !== undefined) await target.keys.create(name, bytes);
  }
  await source.readConsistent(async (view) => {
    for (const spec of specs) await target.restore(spec.file, view.lines(spec.file), await view.history(spec.file));
  });
  const after = await target.check(specs, { repair: false, ts });
  const broken = after.find((j) => j.problems.length > 0);
  if (broken !== undefined) {
    throw new CruxError(
      'journal_damaged',
      `${target.location}: ${broken.file} does not verify after the copy: ${broken.problems[0]!.reason}`,
      'this is a bug: please report it',
    );
  }
  return {
    from: source.location,
    to: target.location,
    journals: after.map((j) => ({ name: j.name, file: j.file, records: j.records })),
    keys,
  };
}
