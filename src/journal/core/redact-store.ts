// `journal redact` on any kind of store (SPEC §7): every record of every journal and its history through
// redactRecordData, every quarantined item through redactQuarantined, on the one record-rewrite path
// (JournalStore.rewrite: re-chained, all or nothing). What it redacted — journal, record, kind, never a value — is
// what it returns, and what the commit log keeps (`sessions.jsonl#12 github-token`, the first few).
import type { SecretKind } from '../../shared/secret-rules';
import type { StoreSpec } from '../codec/store-spec';
import { redactQuarantined, redactRecordData } from './redact-record';
import { SecretTally, type SecretCount } from './secret-survey';
import type { JournalStore } from './store-boundary';

/** Records of one journal (history and quarantine included) that held a secret of one kind. */
export type RedactedCount = SecretCount;

/** One record redacted: its journal, where (the journal, a history piece, a quarantined item), its seq, its kinds. */
export interface RedactedRecord {
  readonly journal: string;
  readonly where: string;
  readonly seq: number | null;
  readonly kinds: readonly SecretKind[];
}

export interface RedactReport {
  readonly redacted: RedactedCount[];
  readonly records: RedactedRecord[];
  /** Quarantined items read, and those that held a secret. */
  readonly quarantine: { readonly items: number; readonly redacted: number };
}

/** The first few redacted records as the commit log says them (never a value). */
const NOTED = 8;

/** Redacts every secret the store keeps (states too with `states`); with `dryRun`, only says what it would. */
export async function redactStore(
  store: JournalStore,
  specs: readonly StoreSpec<unknown>[],
  ts: string,
  opts: { states: boolean; dryRun: boolean },
): Promise<RedactReport> {
  const records: RedactedRecord[] = [];
  const journalOf = (name: string) => specs.find((s) => name.startsWith(`quarantine/${s.file}.`))?.file ?? name;
  const result = await store.rewrite(
    specs,
    ts,
    (record, spec, place) => {
      const { data, kinds } = redactRecordData(record.data, { states: opts.states });
      if (kinds.length === 0) return undefined;
      records.push({ journal: spec.file, where: place.where, seq: record.seq, kinds: [...new Set(kinds)] });
      return { ...record, data };
    },
    {
      doing: 'redaction',
      dryRun: opts.dryRun,
      quarantine: (bytes, name) => {
        const redacted = redactQuarantined(bytes);
        if (redacted === undefined) return undefined;
        records.push({ journal: journalOf(name), where: name, seq: null, kinds: [...new Set(redacted.kinds)] });
        return redacted.bytes;
      },
      note: () => {
        const some = records.slice(0, NOTED).map((r) => `${r.seq === null ? r.where : `${r.journal}#${r.seq}`} ${r.kinds.join('+')}`);
        return `redacted ${some.join(', ')}${records.length > NOTED ? ` and ${records.length - NOTED} more` : ''}`;
      },
    },
  );
  const tally = new SecretTally();
  for (const r of records) for (const kind of r.kinds) tally.add(r.journal, kind);
  return { redacted: tally.list(), records, quarantine: { items: result.quarantine.items, redacted: result.quarantine.changed } };
}
