// The Ed25519 keyring of a store: an agent's key pair made once, public keys trusted and revoked (journaled).
import { notFound } from '../../shared/errors';
import type { AgentName } from '../../shared/ids';
import type { TrustedKey } from './checks';
import { parsePublicKey } from './crypto';
import { ensureAgentKey, type AgentKey } from './keys';
import { HANDOFF_EVENTS, HANDOFF_STORE, type KeyRevokedData, type KeyTrustedData, type Ledger } from './ledger';
import type { Transaction } from '../../journal/core/store-boundary';
import { tsOf, type HandoffScope } from './store';

/** Appends `key` to the keyring unless it is trusted already; answers whether it was appended. */
function trustOnce(tx: Transaction, ledger: Ledger, key: KeyTrustedData, actor: string | undefined): boolean {
  if ((ledger.trusted.get(key.agent) ?? []).some((k) => k.key_id === key.key_id)) return false;
  tx.append(HANDOFF_STORE, [{ ev: HANDOFF_EVENTS.keyTrusted, data: key, actor }]);
  return true;
}

export interface KeygenResult {
  readonly key: AgentKey & { created: boolean };
  /** Whether this data directory's keyring now trusts the key (it holds the private half, so it does). */
  readonly trusted: boolean;
}

/** Creates the agent's Ed25519 key pair (once; a second keygen shows the existing key) and trusts it here. */
export function keygen(scope: HandoffScope, agent: AgentName): Promise<KeygenResult> {
  // In a data directory that does not exist yet, the journal runs `decide` twice (dry, then for real):
  // the key is created by whichever run comes first.
  let created = false;
  return scope.dir.write(async (tx) => {
    const ledger = await tx.load(HANDOFF_STORE);
    const key = await ensureAgentKey(scope.dir.keys, agent);
    created ||= key.created;
    const revoked = (ledger.revoked.get(agent) ?? []).some((k) => k.key_id === key.key_id);
    // A key revoked here stays revoked: only an explicit `handoff trust` takes it back.
    if (revoked) return { key: { ...key, created }, trusted: false };
    trustOnce(tx, ledger, { agent, public_key: key.public_key, key_id: key.key_id }, scope.actor);
    return { key: { ...key, created }, trusted: true };
  }, tsOf(scope));
}

export interface TrustResult {
  readonly agent: string;
  readonly public_key: string;
  readonly key_id: string;
  /** False when the keyring already held this key (nothing written). */
  readonly added: boolean;
}

/** Adds an agent's public key to the keyring: packages it signs with `--alg ed25519` verify here. */
export function trustKey(scope: HandoffScope, agent: AgentName, publicKeyText: string): Promise<TrustResult> {
  const { publicKey, keyId } = parsePublicKey(publicKeyText);
  return scope.dir.write(async (tx) => {
    const added = trustOnce(tx, await tx.load(HANDOFF_STORE), { agent, public_key: publicKey, key_id: keyId }, scope.actor);
    return { agent, public_key: publicKey, key_id: keyId, added };
  }, tsOf(scope));
}

export interface UntrustResult {
  readonly agent: string;
  /** The keys revoked by this call (empty when they were all revoked already: nothing written). */
  readonly revoked: { key_id: string; public_key: string }[];
  /** The agent's keys that stay trusted. */
  readonly trusted: { key_id: string; public_key: string }[];
}

/**
 * Revokes one trusted key of an agent (by fingerprint — its key id — or its public key), or all of them:
 * a package signed by a revoked key is refused (6). Exit 3 when the agent has no such key here.
 */
export function untrustKey(scope: HandoffScope, agent: AgentName, key: string | undefined): Promise<UntrustResult> {
  const wanted = key === undefined ? undefined : /^[0-9a-f]{16}$/i.test(key) ? key.toLowerCase() : parsePublicKey(key).keyId;
  return scope.dir.write(async (tx) => {
    const ledger = await tx.load(HANDOFF_STORE);
    const trusted = ledger.trusted.get(agent) ?? [];
    const revokedBefore = ledger.revoked.get(agent) ?? [];
    const matches = (k: { key_id: string }) => wanted === undefined || k.key_id === wanted;
    const revoke = trusted.filter(matches);
    if (revoke.length === 0 && !revokedBefore.some(matches)) {
      const what = wanted === undefined ? 'no trusted Ed25519 key' : `no Ed25519 key ${wanted}`;
      throw notFound(`agent ${JSON.stringify(agent)} has ${what} here`, 'see the trusted keys with `crux handoff list`');
    }
    const drafts = revoke.map((k) => {
      const data: KeyRevokedData = { agent, key_id: k.key_id, public_key: k.public_key };
      return { ev: HANDOFF_EVENTS.keyRevoked, data, actor: scope.actor };
    });
    if (drafts.length > 0) tx.append(HANDOFF_STORE, drafts);
    const brief = (k: TrustedKey) => ({ key_id: k.key_id, public_key: k.public_key });
    return { agent, revoked: revoke.map(brief), trusted: trusted.filter((k) => !matches(k)).map(brief) };
  }, tsOf(scope));
}
