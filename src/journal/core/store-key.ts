// Which key a store is encrypted with (SPEC §13), as both engines keep it: the item `store-key.json` (a data
// directory's keys/store-key.json, PostgreSQL's row of that name in its `keys` table), holding
// `{"key_id":"k-…","cipher":"aes-256-gcm"}` — never the key; none: a plain store. And what a store is to an
// invocation given a key (or none): the rule each engine applies when it has read the item.
import type { SealMode } from '../codec/cipher';
import { invalid } from '../../shared/errors';
import type { StoreKey } from '../../shared/store-key';

/** The item's bytes for key id `keyId`. */
export const storeKeyMarkText = (keyId: string): string => `${JSON.stringify({ key_id: keyId, cipher: 'aes-256-gcm' })}\n`;

/** The key id the item's bytes name (undefined: no item, a plain store); an item that names none is exit 5. */
export function parseStoreKeyMark(bytes: Uint8Array | string | undefined, where: string, fix: string): string | undefined {
  if (bytes === undefined) return undefined;
  let keyId: unknown;
  try {
    keyId = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'))?.key_id;
  } catch {
    keyId = undefined;
  }
  if (typeof keyId !== 'string' || !/^k-[0-9a-f]{16}$/.test(keyId)) throw invalid(`${where} does not name a key id`, fix);
  return keyId;
}

/** What a store that records `recorded` (undefined: none, a plain store) is to an invocation given `key`. */
export function recordedMode(recorded: string | undefined, key: StoreKey | undefined): SealMode {
  if (recorded === undefined) return { kind: 'plain' };
  return key?.id === recorded ? { kind: 'sealing', key } : { kind: 'locked', keyId: recorded };
}

/**
 * How a write seals (asked under the lock): the recorded key id with the key given (sealing) or without it
 * (locked), or a plain store — a key given to one that holds records is `ignored` (one warning: keyIgnored) —, or
 * a new store given a key, sealing, whose key id the write records (`record`). `hasRecords`: whether any journal
 * holds a record (read only when nothing is recorded and a key is given: `needsRecords`).
 */
export function writeSealing(
  recorded: string | undefined,
  key: StoreKey | undefined,
  hasRecords: boolean,
): { mode: SealMode; record: StoreKey | undefined; ignored: boolean } {
  if (recorded !== undefined || key === undefined) return { mode: recordedMode(recorded, key), record: undefined, ignored: false };
  if (hasRecords) return { mode: { kind: 'plain' }, record: undefined, ignored: true };
  return { mode: { kind: 'sealing', key }, record: key, ignored: false };
}

/** Whether writeSealing needs to know if the store holds records. */
export const needsRecords = (recorded: string | undefined, key: StoreKey | undefined): boolean => recorded === undefined && key !== undefined;

/** The one warning of a process for a key given to a plain store that holds records (the same words on both engines). */
export const keyIgnored = (key: StoreKey): string =>
  `the store is not encrypted: key ${key.id} is ignored (\`crux journal encrypt\` with that key encrypts it; without --key-file and CRUX_KEY_FILE this warning goes)`;
