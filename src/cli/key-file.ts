// Reading the store key from the file --key-file or CRUX_KEY_FILE names (SPEC §13): refused (5) when others may
// read it, as ssh refuses such a key; a refusal names the file, never the key.
import { fs } from '../shared/fs';
import { CruxError, invalid } from '../shared/errors';
import { parseStoreKey, type StoreKey } from '../shared/store-key';

/**
 * Reads the key in `path`: refused (5) when it is not a regular file or group or others may read or write it
 * (as ssh refuses such a key), with the chmod that fixes it.
 */
export function readStoreKeyFile(path: string, what: string): StoreKey {
  let st: import('node:fs').Stats;
  try {
    st = fs.statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw invalid(`no such key file: ${path} (${what})`, 'give the file `crux key new` was saved to');
    throw new CruxError('permission_denied', `cannot read the key file ${path} (${code})`);
  }
  if (!st.isFile()) throw invalid(`the key file ${path} is not a regular file (${what})`);
  if ((st.mode & 0o077) !== 0) {
    throw invalid(
      `the key file ${path} may be read by others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); crux refuses to use it`,
      `chmod 600 ${path}`,
    );
  }
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    throw new CruxError('permission_denied', `cannot read the key file ${path} (${(error as NodeJS.ErrnoException).code})`);
  }
  return parseStoreKey(text, `the key file ${path}`);
}

/** The key an invocation gives: `--key-file` wins over CRUX_KEY_FILE; undefined when neither is given. */
export function storeKeyFrom(flag: string | undefined, env: NodeJS.ProcessEnv): StoreKey | undefined {
  if (flag !== undefined) return readStoreKeyFile(flag, '--key-file');
  const fromEnv = env.CRUX_KEY_FILE;
  return fromEnv ? readStoreKeyFile(fromEnv, 'CRUX_KEY_FILE') : undefined;
}
