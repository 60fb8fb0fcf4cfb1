// What `journal check` says of the secrets a store already keeps (SPEC §7): the records that hold one — in
// states, free text, any journal and its history — counted by journal and kind, never a value. A secret is no
// damage: it changes no exit code. Read from one consistent view, streamed, on either engine.
import { findSecrets } from '../../shared/secrets';
import type { SecretKind } from '../../shared/secret-rules';
import type { StoreSpec } from '../codec/store-spec';
import type { JournalStore } from './store-boundary';

export interface SecretCount {
  readonly journal: string;
  readonly kind: SecretKind;
  readonly records: number;
}

/** Every string a record's JSON holds (keys included), one to a line: what a secret could sit in. */
function recordStrings(line: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined; // damage: `journal check` reports it as such
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(parsed);
  return out.join('\n');
}

/** The kinds of secret one stored line holds (none for a line that is not JSON). */
function secretKindsOf(line: string): Set<SecretKind> {
  const text = recordStrings(line);
  return new Set(text === undefined ? [] : findSecrets(text).map((s) => s.kind));
}

/** Counts, by journal file and kind, the records (history's too) that hold a secret; sorted by journal, then kind. */
export async function surveySecrets(store: JournalStore, specs: readonly StoreSpec<unknown>[]): Promise<SecretCount[]> {
  const counts = new Map<string, number>();
  const count = async (file: string, lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>) => {
    for await (const bytes of lines) {
      for (const kind of secretKindsOf(Buffer.from(bytes).toString('utf8'))) {
        const key = `${file}\u0000${kind}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  };
  // Only reads: a store whose lock cannot be taken for want of write access (a read-only copy) is read without it.
  await store.readConsistent(
    async (view) => {
      for (const spec of specs) {
        await count(spec.file, view.lines(spec.file));
        for (const piece of await view.history(spec.file)) await count(spec.file, piece.lines);
      }
    },
    { readOnly: true },
  );
  return [...counts]
    .map(([key, records]) => {
      const [journal, kind] = key.split('\u0000') as [string, SecretKind];
      return { journal, kind, records };
    })
    .sort((a, b) => a.journal.localeCompare(b.journal) || a.kind.localeCompare(b.kind));
}
