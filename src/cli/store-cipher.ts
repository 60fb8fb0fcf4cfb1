// How an invocation seals and opens (SPEC §13): its key (--key-file, CRUX_KEY_FILE), and what its store is —
// encrypted with a key id (keys/store-key.json), plain, or new (no record yet: a key given makes it encrypted from
// its first record). A key given to a plain store is ignored with one warning that says how to encrypt it.
import { configureCipher } from '../journal/codec/cipher';
import { keyIgnored, needsRecords, recordedMode, writeSealing } from '../journal/core/store-key';
import { readStoreKeyMark, storeHasRecords, writeStoreKeyMark } from '../journal/dir/store-key-mark';
import { storeKeyFrom } from './key-file';
import type { StoreTarget } from './store';

export function setUpCipher(target: StoreTarget, keyFile: string | undefined, env: NodeJS.ProcessEnv, warn: (message: string) => void): void {
  const key = storeKeyFrom(keyFile, env);
  if (target.kind !== 'dir') {
    // PostgreSQL: each write reads the store's key id under its lock first (journal/pg/pg-store-key.ts); reads
    // open sealed values with this key.
    configureCipher({ key, mode: () => ({ kind: 'plain' }) });
    return;
  }
  const root = target.path;
  const mode = () => {
    const recorded = readStoreKeyMark(root);
    const sealing = writeSealing(recorded, key, needsRecords(recorded, key) && storeHasRecords(root));
    // A new store given a key: encrypted from its first record (the write that asks holds the lock).
    if (sealing.record !== undefined) writeStoreKeyMark(root, sealing.record.id);
    return sealing.mode;
  };
  configureCipher({ key, mode, known: () => recordedMode(readStoreKeyMark(root), key) });
  if (needsRecords(readStoreKeyMark(root), key) && storeHasRecords(root)) warn(keyIgnored(key!));
}
