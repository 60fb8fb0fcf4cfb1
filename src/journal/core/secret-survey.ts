// What `journal check` says of the secrets a store already keeps (SPEC §7): the records that hold one — in
// states, free text, any journal and its history — counted by journal and kind, never a value. A secret is no
// damage: it changes no exit code. Counted in check's own scan (check.ts: each record as it is read, on either
// engine), so that check reads and locks the store once.
import { findSecrets } from '../../shared/secrets';
import type { SecretKind } from '../../shared/secret-rules';
import type { JournalRecord } from '../codec/record';

export interface SecretCount {
  readonly journal: string;
  readonly kind: SecretKind;
  readonly records: number;
}

/**
 * Every string a record's data and actor hold (keys included), one to a line: what a secret could sit in (its
 * version, sequence number, time, event and hashes are checked formats that hold none).
 */
function recordStrings(record: JournalRecord): string {
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
  if (record.actor !== undefined) out.push(record.actor);
  walk(record.data);
  return out.join('\n');
}

/** The records that hold a secret, counted by journal and kind as check's scan sees them (or `journal redact` redacts them). */
export class SecretTally {
  private readonly counts = new Map<string, number>();

  /** One record of journal `file` (its history's too). */
  see(file: string, record: JournalRecord): void {
    for (const kind of new Set(findSecrets(recordStrings(record)).map((s) => s.kind))) this.add(file, kind);
  }

  /** One record of journal `file` that held a secret of `kind`. */
  add(file: string, kind: SecretKind): void {
    const key = `${file}\u0000${kind}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** The counts, sorted by journal, then kind. */
  list(): SecretCount[] {
    return [...this.counts]
      .map(([key, records]) => {
        const [journal, kind] = key.split('\u0000') as [string, SecretKind];
        return { journal, kind, records };
      })
      .sort((a, b) => a.journal.localeCompare(b.journal) || a.kind.localeCompare(b.kind));
  }
}
