// The human renderings of `crux store init` (what was created, or would be, or that the store was ready) and of
// `journal encrypt`, `rekey` and `decrypt` (per journal, records and history's rewritten).
import type { RewriteResult } from '../journal/core/rewrite';
import type { InitReport } from '../journal/core/store-boundary';
import { printable } from '../shared/printable';

export function renderInit(r: InitReport): string {
  const store = printable(r.store);
  const version = r.schema_version === null ? '' : ` (schema version ${r.schema_version})`;
  if (r.created.length === 0) return `nothing to do: ${store} is ready${version}`;
  const what = r.created.map(printable).join(', ');
  return r.printed ? `would create ${what}: nothing was changed` : `${store}: created ${what}${version}`;
}

export type KeyChange = 'encrypt' | 'rekey' | 'decrypt';

export interface KeyChangeReport {
  readonly change: KeyChange;
  /** The key id the store is encrypted with afterwards (null: plain). */
  readonly key_id: string | null;
  readonly journals: RewriteResult['journals'];
  readonly quarantine: RewriteResult['quarantine'];
}

const DONE: Record<KeyChange, string> = { encrypt: 'encrypted with key', rekey: 'rekeyed to key', decrypt: 'decrypted' };

export function* renderKeyChange(r: KeyChangeReport): Iterable<string> {
  yield r.key_id === null ? `the store is ${DONE[r.change]}` : `the store is ${DONE[r.change]} ${r.key_id}`;
  for (const j of r.journals) {
    yield `  ${j.file}: ${j.changed} of ${j.records} records rewritten; history/: ${j.history.changed} of ${j.history.records} in ${j.history.pieces} pieces`;
  }
  if (r.quarantine.items > 0) yield `  quarantine/: ${r.quarantine.changed} of ${r.quarantine.items} items rewritten`;
}
