// Minting, pure: a session's state, the facts at hand, a key and a clock in; the signed envelope out.
import { invalid } from '../../shared/errors';
import { keptText } from '../../shared/free-text';
import { formatLaterTime, formatTime, type Instant } from '../../shared/time';
import { serdeIncompatibility } from '../../shared/json-text';
import { daemonIncompatible } from './checks';
import { collectWorkIds, selectFacts, type BundlableFact } from './bundle';
import { contentHashOf, ED25519_ALG, MAC_ALG, macOf, signEd25519 } from './crypto';
import { encodeEnvelope, MAX_ENVELOPE_BYTES, toBase64, type Envelope } from './envelope';
import { encodePackage, type PackageDraft } from './package';
import type { TaskRecord } from './task-record';

export type Signer =
  // The MAC key may be given lazily: it is fetched (and, the first time, created) only once the package fits.
  | { readonly alg: typeof MAC_ALG; readonly key: Uint8Array | (() => Uint8Array) }
  | { readonly alg: typeof ED25519_ALG; readonly privatePem: string; readonly keyId: string };

export interface MintInput {
  readonly sessionId: string;
  /** The session's stored state text (validated JSON). */
  readonly state: string;
  readonly source: string;
  readonly target: string | null;
  readonly message: string | null;
  readonly taskRecord: TaskRecord | undefined;
  /** Facts visible to the source agent; empty unless --include-facts. */
  readonly facts: readonly BundlableFact[];
  readonly handoffId: string;
  readonly now: Instant;
  readonly ttlMs: number;
  readonly signer: Signer;
}

export interface Minted {
  readonly envelope: Envelope;
  readonly draft: PackageDraft;
  readonly payload: Uint8Array;
  readonly content_hash: string;
  readonly facts: number;
  /** Why a Crux daemon could not deserialize this package (crux mints and accepts it all the same). */
  readonly daemonIncompatible: string | undefined;
}

export function mintPackage(input: MintInput): Minted {
  const parsedState = JSON.parse(input.state) as unknown;
  const bundled = selectFacts(parsedState, input.sessionId, input.facts);
  const draft: PackageDraft = {
    session_id: input.sessionId,
    session_state: input.state,
    facts: bundled.map((f) => f.raw),
    created_at: formatTime(input.now),
    source_agent: input.source,
    target_agent: input.target,
    // Free text is stored and shown without URL credentials (SPEC §7); the state blob is opaque.
    message: input.message === null ? null : keptText(input.message),
    work_ids: collectWorkIds(parsedState, bundled),
    task_record: input.taskRecord,
    handoff_id: input.handoffId,
    expires_at: formatLaterTime(input.now, input.ttlMs, '--ttl'),
    key_id: input.signer.alg === ED25519_ALG ? input.signer.keyId : undefined,
  };
  const text = encodePackage(draft);
  const payload = new Uint8Array(Buffer.from(text, 'utf8'));
  const content_hash = contentHashOf(payload);
  checkEnvelopeSize(payload, content_hash, input.signer.alg);
  const { signer } = input;
  const signature =
    signer.alg === MAC_ALG ? macOf(typeof signer.key === 'function' ? signer.key() : signer.key, payload) : signEd25519(signer.privatePem, payload);
  const envelope: Envelope = {
    payload_b64: toBase64(payload),
    content_hash,
    signature_b64: toBase64(signature),
    signature_alg: input.signer.alg,
  };
  const reason = serdeIncompatibility(text);
  return { envelope, draft, payload, content_hash, facts: bundled.length, daemonIncompatible: reason && daemonIncompatible(reason) };
}

const SIGNATURE_BYTES = { [MAC_ALG]: 32, [ED25519_ALG]: 64 } as const;

/**
 * A package no receiver would take is refused at mint (exit 5), before anything is signed or written: the
 * envelope as printed (with its newline) must stay within the 8 MiB that accept and inspect read.
 */
function checkEnvelopeSize(payload: Uint8Array, contentHash: string, alg: Signer['alg']): void {
  const signatureB64 = 'A'.repeat(4 * Math.ceil(SIGNATURE_BYTES[alg] / 3));
  const bytes =
    Buffer.byteLength(encodeEnvelope({ payload_b64: toBase64(payload), content_hash: contentHash, signature_b64: signatureB64, signature_alg: alg })) + 1;
  if (bytes > MAX_ENVELOPE_BYTES) {
    throw invalid(
      `the package would be ${bytes} bytes, over the limit of ${MAX_ENVELOPE_BYTES} (8 MiB) that \`crux handoff accept\` reads`,
      'hand off a smaller session state (or without --include-facts)',
    );
  }
}
