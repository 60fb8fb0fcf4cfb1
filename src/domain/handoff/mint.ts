// Minting, pure: a session's state, the facts at hand, a key and a clock in; the signed envelope out.
import { scrubText } from '../../shared/scrub';
import { formatTime, type Instant } from '../../shared/time';
import { collectWorkIds, selectFacts, type BundlableFact } from './bundle';
import { contentHashOf, ED25519_ALG, MAC_ALG, macOf, signEd25519 } from './crypto';
import { toBase64, type Envelope } from './envelope';
import { encodePackage, type PackageDraft } from './package';
import type { TaskRecord } from './task-record';

export type Signer =
  | { readonly alg: typeof MAC_ALG; readonly key: Uint8Array }
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
    message: input.message === null ? null : scrubText(input.message),
    work_ids: collectWorkIds(parsedState, bundled),
    task_record: input.taskRecord,
    handoff_id: input.handoffId,
    expires_at: formatTime(input.now + input.ttlMs),
    key_id: input.signer.alg === ED25519_ALG ? input.signer.keyId : undefined,
  };
  const payload = new Uint8Array(Buffer.from(encodePackage(draft), 'utf8'));
  const signature = input.signer.alg === MAC_ALG ? macOf(input.signer.key, payload) : signEd25519(input.signer.privatePem, payload);
  const content_hash = contentHashOf(payload);
  const envelope: Envelope = {
    payload_b64: toBase64(payload),
    content_hash,
    signature_b64: toBase64(signature),
    signature_alg: input.signer.alg,
  };
  return { envelope, draft, payload, content_hash, facts: bundled.length };
}
