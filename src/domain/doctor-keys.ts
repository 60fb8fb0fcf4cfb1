// `crux doctor`, the keys judged: which handoff key a mint would use, its fingerprint and exposure, the agent's key.
import { blake3 } from '@noble/hashes/blake3.js';
import type { JournalStore } from '../journal/core/store-boundary';
import { deriveCompatKey, deriveKeyFromSecret, KEY_BYTES } from './handoff/crypto';
import { HANDOFF_KEY, HANDOFF_KEY_FILE, loadAgentKey } from './handoff/keys';
import { givenKey, STORE_KEY_ITEM } from '../journal/codec/cipher';

import { isPrivate, octal, type DoctorInput, type DoctorReport, type Finding, type KeySource } from './doctor-report';

const fingerprintOf = (key: Uint8Array) => Buffer.from(blake3(key)).toString('hex').slice(0, 16);

/** Which key a mint would use: an environment secret wins over the key file (SPEC §6). */
export async function judgeKey(input: DoctorInput, usable: boolean, findings: Finding[]): Promise<DoctorReport['handoff_key']> {
  const { env, dir } = input;
  const path = dir.keys.describe(HANDOFF_KEY);
  const stat = usable ? await dir.keys.stat(HANDOFF_KEY) : undefined;
  const facts = { exists: stat !== undefined, bytes: stat?.bytes ?? 0, mode: stat?.mode ?? null };
  const present: { source: KeySource; key: () => Promise<Uint8Array | undefined> | Uint8Array | undefined }[] = [];
  if (env.CRUX_HANDOFF_SECRET) present.push({ source: 'CRUX_HANDOFF_SECRET', key: () => deriveKeyFromSecret(env.CRUX_HANDOFF_SECRET!) });
  if (env.CRUX_MCP_HANDOFF_SECRET) present.push({ source: 'CRUX_MCP_HANDOFF_SECRET', key: () => deriveCompatKey(env.CRUX_MCP_HANDOFF_SECRET!) });
  if (facts.exists) {
    present.push({
      source: 'file',
      key: async () => {
        const bytes = await dir.keys.peek(HANDOFF_KEY);
        if (bytes === undefined) {
          findings.push({ level: 'warning', code: 'key_unreadable', message: `${path} cannot be read` });
          return undefined;
        }
        if (bytes.length !== KEY_BYTES) {
          findings.push({
            level: 'warning',
            code: 'key_bad_size',
            message: `${path} is ${bytes.length} bytes, not ${KEY_BYTES}: mint and accept will refuse it`,
          });
          return undefined;
        }
        return new Uint8Array(bytes);
      },
    });
    // A key in a database has no file mode (null): the database's own grants guard it, not chmod.
    if (facts.mode !== null && !isPrivate(facts.mode)) {
      findings.push({
        level: 'warning',
        code: 'key_exposed',
        message: `${path} is mode ${octal(facts.mode)}: group or others can read the handoff key, so handoff commands refuse it (chmod 600; a key others have read is no longer secret)`,
      });
    }
  }
  if (env.CRUX_MCP_HANDOFF_SECRET && !env.CRUX_HANDOFF_SECRET) {
    findings.push({
      level: 'note',
      code: 'compat_key',
      message: 'the handoff key comes from CRUX_MCP_HANDOFF_SECRET (Crux daemon compatibility: a bare hash of the secret, without domain separation)',
    });
  }
  const chosen = present[0];
  const key = await chosen?.key();
  return {
    source: chosen?.source ?? 'none',
    fingerprint: key === undefined ? null : fingerprintOf(key),
    file: {
      // A data directory's key file, relative to it; a database's key row as messages name it.
      path: facts.mode === null && stat !== undefined ? stat.path : HANDOFF_KEY_FILE,
      exists: facts.exists,
      mode: octal(facts.mode),
      bytes: facts.exists ? facts.bytes : null,
      private: isPrivate(facts.mode),
    },
    shadowed: present.slice(1).map((p) => p.source),
  };
}

export async function agentKeyOf(dir: JournalStore, agent: string, findings: Finding[]): Promise<{ key_id: string; path: string } | null> {
  try {
    const key = await loadAgentKey(dir.keys, agent);
    return key === undefined ? null : { key_id: key.key_id, path: key.path };
  } catch (error) {
    findings.push({ level: 'warning', code: 'agent_key_unusable', message: (error as Error).message });
    return null;
  }
}

/**
 * Whether the store is encrypted at rest and with which key id (its key item: never a key), and the key this
 * invocation gave: a note either way, so that an operator knows before a command that needs plaintext exits 6.
 */
export async function judgeEncryption(dir: JournalStore, usable: boolean, findings: Finding[]): Promise<DoctorReport['encryption']> {
  const bytes = usable ? await dir.keys.peek(STORE_KEY_ITEM) : undefined;
  const given = givenKey()?.id ?? null;
  if (bytes === undefined) return { encrypted: false, key_id: null, key_given: given };
  let keyId: unknown;
  try {
    keyId = JSON.parse(Buffer.from(bytes).toString('utf8'))?.key_id;
  } catch {
    keyId = undefined;
  }
  const where = dir.keys.describe(STORE_KEY_ITEM);
  if (typeof keyId !== 'string' || !/^k-[0-9a-f]{16}$/.test(keyId)) {
    findings.push({ level: 'warning', code: 'store_key_unreadable', message: `${where} names no key id: restore it from a backup` });
    return { encrypted: true, key_id: null, key_given: given };
  }
  const which =
    given === keyId
      ? 'which is the key given'
      : `${given === null ? 'and no key was given' : `not the key given (${given})`}: commands that need plaintext exit 6 (--key-file or CRUX_KEY_FILE)`;
  findings.push({ level: 'note', code: 'encrypted', message: `the store is encrypted at rest with key ${keyId} (${where}), ${which}` });
  return { encrypted: true, key_id: keyId, key_given: given };
}
