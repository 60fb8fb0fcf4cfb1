// Which key signs and verifies: the MAC key (secret, compat secret, or the persistent key file) and agents' Ed25519 keys.
import { invalid } from '../../shared/errors';
import type { KeyStore } from '../../journal/core/store-boundary';
import { deriveCompatKey, deriveKeyFromSecret, generateAgentKeyPair, KEY_BYTES, nodeCrypto, publicKeyOfPrivate } from './crypto';

/** The MAC key's item in the key store, and how reports name it (relative to the data directory). */
export const HANDOFF_KEY = 'handoff.key';
export const HANDOFF_KEY_FILE = `keys/${HANDOFF_KEY}`;

export type MacKeySource = 'CRUX_HANDOFF_SECRET' | 'CRUX_MCP_HANDOFF_SECRET' | 'key-file';

export interface MacKey {
  readonly key: Uint8Array;
  readonly source: MacKeySource;
  /** How messages name it. */
  readonly label: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The MAC key, by precedence: CRUX_HANDOFF_SECRET (derive-key, crux's context), then CRUX_MCP_HANDOFF_SECRET
 * (the daemon's bare hash, for packages exchanged with a Crux daemon), then `keys/handoff.key`. An empty
 * variable counts as unset. With `create`, a missing key file is made (32 random bytes, exclusively, 0600);
 * otherwise a missing key is undefined.
 */
export async function resolveMacKey(keys: KeyStore, env: Env, opts: { create: boolean }): Promise<MacKey | undefined> {
  if (env.CRUX_HANDOFF_SECRET) {
    return { key: deriveKeyFromSecret(env.CRUX_HANDOFF_SECRET), source: 'CRUX_HANDOFF_SECRET', label: 'key derived from CRUX_HANDOFF_SECRET' };
  }
  if (env.CRUX_MCP_HANDOFF_SECRET) {
    return {
      key: deriveCompatKey(env.CRUX_MCP_HANDOFF_SECRET),
      source: 'CRUX_MCP_HANDOFF_SECRET',
      label: 'daemon-compatible key from CRUX_MCP_HANDOFF_SECRET',
    };
  }
  const path = keys.describe(HANDOFF_KEY);
  let bytes = await keys.read(HANDOFF_KEY);
  if (bytes === undefined) {
    if (!opts.create) return undefined;
    // Two first mints race here: one file wins, both then read it.
    await keys.create(HANDOFF_KEY, nodeCrypto().randomBytes(KEY_BYTES));
    bytes = (await keys.read(HANDOFF_KEY))!;
  }
  if (bytes.length !== KEY_BYTES) {
    throw invalid(`the handoff key ${path} is ${bytes.length} bytes, not ${KEY_BYTES}`, 'restore it from a backup; a new key cannot verify old packages');
  }
  return { key: new Uint8Array(bytes), source: 'key-file', label: `key in ${HANDOFF_KEY_FILE}` };
}

/** The private-key item of an agent: readable names stay readable, others are hashed into a safe name. */
function agentKeyName(agent: string): string {
  const safe = /^[A-Za-z0-9._-]{1,64}$/.test(agent) && !agent.startsWith('.') ? agent : `h-${nodeCrypto().hash('sha256', agent, 'hex').slice(0, 32)}`;
  return `agent-${safe}.ed25519.pem`;
}

export interface AgentKey {
  readonly agent: string;
  readonly public_key: string;
  readonly key_id: string;
  readonly path: string;
}

/** An agent's Ed25519 private key (PEM) and its public half, or undefined when it has none here. */
export async function loadAgentKey(keys: KeyStore, agent: string): Promise<(AgentKey & { privatePem: string }) | undefined> {
  const name = agentKeyName(agent);
  const path = keys.describe(name);
  const bytes = await keys.read(name);
  const pem = bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
  if (pem === undefined) return undefined;
  let pub: { publicKey: string; keyId: string };
  try {
    pub = publicKeyOfPrivate(pem);
  } catch {
    throw invalid(`the key file ${path} is not an Ed25519 private key`, 'move it away and run `crux handoff keygen` again');
  }
  return { agent, public_key: pub.publicKey, key_id: pub.keyId, path, privatePem: pem };
}

/** Creates the agent's key pair unless it has one; either way returns the public half. */
export async function ensureAgentKey(keys: KeyStore, agent: string): Promise<AgentKey & { created: boolean }> {
  const existing = await loadAgentKey(keys, agent);
  if (existing !== undefined) return { ...publicHalf(existing), created: false };
  const pair = generateAgentKeyPair();
  const created = await keys.create(agentKeyName(agent), pair.privatePem);
  return { ...publicHalf((await loadAgentKey(keys, agent))!), created };
}

const publicHalf = (k: AgentKey): AgentKey => ({ agent: k.agent, public_key: k.public_key, key_id: k.key_id, path: k.path });
