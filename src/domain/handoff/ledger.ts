// handoffs.jsonl: every minted package (with its envelope, for export), the consumed set, and the Ed25519 keyring.
import { declareEvents, type DraftOf, type StoreSpec, unhandledEvent } from '../../journal/codec/store-spec';
import type { JournalRecord } from '../../journal/codec/record';
import type { LinePosition } from '../../journal/codec/scan';
import type { Envelope } from './envelope';
import type { TrustedKey } from './checks';

export const HANDOFF_EVENTS = {
  minted: 'handoff.minted',
  accepted: 'handoff.accepted',
  keyTrusted: 'handoff.key_trusted',
  keyRevoked: 'handoff.key_revoked',
} as const;

/** A package this data directory minted. */
export interface MintedData {
  readonly handoff_id: string;
  readonly session_id: string;
  readonly source_agent: string;
  readonly target_agent: string | null;
  readonly created_at: string;
  readonly expires_at: string;
  readonly content_hash: string;
  readonly signature_alg: string;
  readonly facts: number;
  readonly work_ids: number;
  /** Scrubbed, as in the package. */
  readonly message: string | null;
  readonly envelope: Envelope;
}

/** A package accepted here: its content_hash is in the consumed set from this record on. */
export interface AcceptedData {
  readonly content_hash: string;
  readonly handoff_id: string | null;
  readonly session_id: string;
  readonly source_agent: string;
  /** The receiving agent (--as). */
  readonly agent: string;
  readonly target_agent: string | null;
  readonly created_at: string;
  /** When the package stopped being acceptable (expires_at, or created_at + max-age). */
  readonly expires_at: string;
  readonly signature_alg: string;
  readonly facts: number;
  readonly message: string | null;
}

export interface KeyTrustedData {
  readonly agent: string;
  readonly public_key: string;
  readonly key_id: string;
}

/** `crux handoff untrust`: the key no longer verifies anything here, until it is trusted again. */
export type KeyRevokedData = KeyTrustedData;

export interface RevokedKey extends TrustedKey {
  readonly revoked_at: string;
  readonly bytes: number;
}

/** Every event handoffs.jsonl may contain, and its payload. */
export interface HandoffEventMap {
  'handoff.minted': MintedData;
  'handoff.accepted': AcceptedData;
  'handoff.key_trusted': KeyTrustedData;
  'handoff.key_revoked': KeyRevokedData;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isEnvelope = (v: any): v is Envelope =>
  v !== null && typeof v === 'object' && ['payload_b64', 'content_hash', 'signature_b64', 'signature_alg'].every((k) => isString(v[k]));
const isKey = (d: any) => isString(d.agent) && isString(d.public_key) && isString(d.key_id);

const HANDOFF = declareEvents<HandoffEventMap>({
  'handoff.minted': (d) =>
    isString(d.handoff_id) && isString(d.content_hash) && isEnvelope(d.envelope) ? (d as MintedData) : 'no handoff_id, content_hash or envelope',
  'handoff.accepted': (d) => (isString(d.content_hash) ? (d as AcceptedData) : 'no content_hash'),
  'handoff.key_trusted': (d) => (isKey(d) ? (d as KeyTrustedData) : 'no agent, public_key or key_id'),
  'handoff.key_revoked': (d) => (isKey(d) ? (d as KeyTrustedData) : 'no agent, public_key or key_id'),
});
const HANDOFF_VOCABULARY = HANDOFF.vocabulary;

export interface MintedEntry extends MintedData {
  readonly bytes: number;
}
export interface AcceptedEntry extends AcceptedData {
  readonly accepted_at: string;
  readonly actor: string | null;
  readonly bytes: number;
}

export interface Ledger {
  readonly minted: Map<string, MintedEntry>;
  /** content_hash → handoff_id of the minted package. */
  readonly mintedByHash: Map<string, string>;
  /** The consumed set, keyed by content_hash. */
  readonly accepted: Map<string, AcceptedEntry>;
  readonly trusted: Map<string, (TrustedKey & { bytes: number })[]>;
  /** Keys `handoff untrust` revoked, per agent: a package they signed is refused (6). */
  readonly revoked: Map<string, RevokedKey[]>;
}

function setOrDelete<T>(map: Map<string, T[]>, key: string, list: T[]): void {
  if (list.length === 0) map.delete(key);
  else map.set(key, list);
}

function evolve(ledger: Ledger, record: JournalRecord, at: LinePosition): void {
  const event = HANDOFF.parse(record);
  if (typeof event === 'string') return; // reads report it as a bad line
  switch (event.ev) {
    case 'handoff.minted': {
      const d = event.data;
      ledger.minted.set(d.handoff_id, { ...d, bytes: at.length });
      ledger.mintedByHash.set(d.content_hash, d.handoff_id);
      return;
    }
    case 'handoff.accepted': {
      const d = event.data;
      // The first acceptance stands; a duplicate line changes nothing.
      if (ledger.accepted.has(d.content_hash)) return;
      ledger.accepted.set(d.content_hash, { ...d, accepted_at: record.ts, actor: record.actor ?? null, bytes: at.length });
      return;
    }
    case 'handoff.key_trusted': {
      const d = event.data;
      const keys = ledger.trusted.get(d.agent) ?? [];
      if (!keys.some((k) => k.key_id === d.key_id)) ledger.trusted.set(d.agent, [...keys, { public_key: d.public_key, key_id: d.key_id, bytes: at.length }]);
      // Trusting a revoked key again is an operator's explicit decision: it is no longer revoked.
      const revoked = ledger.revoked.get(d.agent)?.filter((k) => k.key_id !== d.key_id);
      if (revoked !== undefined) setOrDelete(ledger.revoked, d.agent, revoked);
      return;
    }
    case 'handoff.key_revoked': {
      const d = event.data;
      setOrDelete(
        ledger.trusted,
        d.agent,
        (ledger.trusted.get(d.agent) ?? []).filter((k) => k.key_id !== d.key_id),
      );
      const revoked = ledger.revoked.get(d.agent) ?? [];
      if (!revoked.some((k) => k.key_id === d.key_id))
        ledger.revoked.set(d.agent, [...revoked, { public_key: d.public_key, key_id: d.key_id, revoked_at: record.ts, bytes: at.length }]);
      return;
    }
    default:
      unhandledEvent(event);
  }
}

/**
 * What lies sealed on an encrypted store (SPEC §13): a handoff's message and the package kept to export again (its
 * payload: the state, the facts, the task record). Ids, agents, times, hashes, the signature and counts stay plain,
 * so list, expiry and the replay ledger need no key. Each sealed at its handoff (an accept without an id: its hash).
 */
const HANDOFFS_FILE = 'handoffs.jsonl';
const handoffEntity = (d: any): string => String(d.handoff_id ?? d.content_hash);
export const handoffPlace = (d: { handoff_id: string | null; content_hash: string }, field: string) => ({
  file: HANDOFFS_FILE,
  entity: handoffEntity(d),
  field,
});

export const HANDOFF_STORE: StoreSpec<Ledger> = {
  file: HANDOFFS_FILE,
  vocabulary: HANDOFF_VOCABULARY,
  sealed: {
    fields: { 'handoff.minted': { message: 'message', 'envelope.payload_b64': 'package' }, 'handoff.accepted': { message: 'message' } },
    entity: handoffEntity,
  },
  initial: () => ({ minted: new Map(), mintedByHash: new Map(), accepted: new Map(), trusted: new Map(), revoked: new Map() }),
  evolve,
  // Nothing in the ledger dies: the consumed set must outlive every package it guards.
  live: (ledger): DraftOf<HandoffEventMap>[] => [
    ...[...ledger.minted.values()].map(({ bytes: _b, ...data }) => ({ ev: HANDOFF_EVENTS.minted, data })),
    ...[...ledger.accepted.values()].map(({ bytes: _b, accepted_at, actor, ...data }) => ({
      ev: HANDOFF_EVENTS.accepted,
      data,
      actor: actor ?? undefined,
      ts: accepted_at,
    })),
    ...[...ledger.trusted].flatMap(([agent, keys]) =>
      keys.map((k) => ({ ev: HANDOFF_EVENTS.keyTrusted, data: { agent, public_key: k.public_key, key_id: k.key_id } })),
    ),
    ...[...ledger.revoked].flatMap(([agent, keys]) =>
      keys.map((k) => ({ ev: HANDOFF_EVENTS.keyRevoked, data: { agent, public_key: k.public_key, key_id: k.key_id }, ts: k.revoked_at })),
    ),
  ],
  liveBytes: (ledger) => {
    let total = 0;
    for (const m of ledger.minted.values()) total += m.bytes;
    for (const a of ledger.accepted.values()) total += a.bytes;
    for (const keys of ledger.trusted.values()) for (const k of keys) total += k.bytes;
    for (const keys of ledger.revoked.values()) for (const k of keys) total += k.bytes;
    return total;
  },
};

export interface KeyRow {
  readonly agent: string;
  /** The key id: 16 hex digits of BLAKE3 over the raw public key, as `untrust` takes it. */
  readonly fingerprint: string;
  readonly public_key: string;
  readonly status: 'trusted' | 'revoked';
  readonly revoked_at: string | null;
}

/** The keyring: every trusted and revoked Ed25519 key, by agent. */
export function keyRows(ledger: Ledger): KeyRow[] {
  const rows: KeyRow[] = [];
  for (const [agent, keys] of ledger.trusted)
    for (const k of keys) rows.push({ agent, fingerprint: k.key_id, public_key: k.public_key, status: 'trusted', revoked_at: null });
  for (const [agent, keys] of ledger.revoked)
    for (const k of keys) rows.push({ agent, fingerprint: k.key_id, public_key: k.public_key, status: 'revoked', revoked_at: k.revoked_at });
  return rows.sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : a.status === b.status ? 0 : a.status === 'trusted' ? -1 : 1));
}
