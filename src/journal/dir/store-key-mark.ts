// Which key a data directory is encrypted with (SPEC §13): `keys/store-key.json`, `{"key_id":"k-…","cipher":
// "aes-256-gcm"}`, written once (0600, under the writers' lock) by the first write a key seals, and rewritten by
// `journal encrypt`, `rekey` and `decrypt` (removed). No file: a plain store. Never the key itself.
import { fs } from '../../shared/fs';
import { join } from 'node:path';
import { ensurePrivateDir, fsyncDir, writeNewFileDurable, asStorageError } from '../../shared/durable-fs';
import { STORE_KEY_ITEM } from '../codec/cipher';
import { parseStoreKeyMark, storeKeyMarkText } from '../core/store-key';

const MARK = join('keys', STORE_KEY_ITEM);
const JOURNALS = ['sessions.jsonl', 'cases.jsonl', 'handoffs.jsonl', 'facts.jsonl'];

/** The key id the store records, or undefined for a plain store. */
export function readStoreKeyMark(root: string): string | undefined {
  const path = join(root, MARK);
  // No exception for the common case (a plain store): creating one costs more than the check.
  if (!fs.existsSync(path)) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw asStorageError(error, path);
  }
  return parseStoreKeyMark(text, path, 'restore it from a backup of the data directory');
}

/** Records (or with undefined, removes) the key id the store is encrypted with: atomically, fsynced. */
export function writeStoreKeyMark(root: string, keyId: string | undefined): void {
  const path = join(root, MARK);
  const dir = join(root, 'keys');
  try {
    if (keyId === undefined) {
      fs.rmSync(path, { force: true });
    } else {
      ensurePrivateDir(dir);
      const temp = `${path}.${process.pid}.tmp`;
      fs.rmSync(temp, { force: true });
      writeNewFileDurable(temp, storeKeyMarkText(keyId));
      fs.renameSync(temp, path);
    }
    fsyncDir(dir);
  } catch (error) {
    throw asStorageError(error, path);
  }
}

/** Whether any journal of the store holds a byte: a store that holds none may still become an encrypted one. */
export function storeHasRecords(root: string): boolean {
  return JOURNALS.some((file) => {
    try {
      return (fs.statSync(join(root, file), { throwIfNoEntry: false })?.size ?? 0) > 0;
    } catch {
      return false;
    }
  });
}
