// How an invocation seals and opens (SPEC §13): its key (--key-file, CRUX_KEY_FILE), and what its store is —
// encrypted with a key id (keys/store-key.json), plain, or new (no record yet: a key given makes it encrypted from
// its first record). A key given to a plain store is ignored with one warning that says how to encrypt it.
import { configureCipher, type SealMode } from '../journal/codec/cipher';
import { readStoreKeyMark, storeHasRecords, writeStoreKeyMark } from '../journal/dir/store-key-mark';
import type { StoreKey } from '../shared/store-key';
import { storeKeyFrom } from './key-file';
import type { StoreTarget } from './store';

const ignored = (key: StoreKey) =>
  `the store is not encrypted: key ${key.id} is ignored (\`crux journal encrypt\` with that key encrypts it; without --key-file and CRUX_KEY_FILE this warning goes)`;

export function setUpCipher(target: StoreTarget, keyFile: string | undefined, env: NodeJS.ProcessEnv, warn: (message: string) => void): void {
  const key = storeKeyFrom(keyFile, env);
  if (target.kind !== 'dir') {
    // PostgreSQL: each write reads the store's key id under its lock first (journal/pg/pg-store-key.ts); reads
    // open sealed values with this key.
    configureCipher({ key, mode: () => ({ kind: 'plain' }) });
    return;
  }
  const root = target.path;
  const mode = (): SealMode => {
    const recorded = readStoreKeyMark(root);
    if (recorded !== undefined) return key?.id === recorded ? { kind: 'sealing', key } : { kind: 'locked', keyId: recorded };
    if (key === undefined || storeHasRecords(root)) return { kind: 'plain' };
    // A new store given a key: encrypted from its first record (the write that asks holds the lock).
    writeStoreKeyMark(root, key.id);
    return { kind: 'sealing', key };
  };
  const known = (): SealMode => {
    const recorded = readStoreKeyMark(root);
    if (recorded === undefined) return { kind: 'plain' };
    return key?.id === recorded ? { kind: 'sealing', key } : { kind: 'locked', keyId: recorded };
  };
  configureCipher({ key, mode, known });
  if (key !== undefined && readStoreKeyMark(root) === undefined && storeHasRecords(root)) warn(ignored(key));
}
