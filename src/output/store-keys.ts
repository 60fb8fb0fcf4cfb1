// The human rendering of `journal encrypt`, `rekey` and `decrypt`: per journal, records (and history's) rewritten.
import type { RewriteResult } from '../journal/core/rewrite';

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
