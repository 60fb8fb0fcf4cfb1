// The handoff store: mint, accept and inspect — replay and decisions over the journal layer (listing.ts lists
// and exports, key-ring.ts keeps the Ed25519 keys).
import { stateText } from '../session/view';
import type { JournalStore } from '../../journal/core/store-boundary';
import type { DraftOf } from '../../journal/codec/store-spec';
import { CruxError, invalid, notFound } from '../../shared/errors';
import { parseLogicalSessionId, scopeSessionId, type AgentName, type HandoffId, type LogicalSessionId } from '../../shared/ids';
import { objectMembers } from '../../shared/json-text';
import { keptText } from '../../shared/free-text';
import { formatTime, type Instant } from '../../shared/time';
import { decideHandOff, decideReceive, requireSession } from '../session/decide';
import { acceptStateDocument } from '../session/state-document';
import { SESSION_STORE } from '../session/fold';
import { verifyPackage, CHECK_NAMES, type CheckName, type CheckStatus, type Verification } from './checks';
import { ED25519_ALG, MAC_ALG, type SignatureAlg } from './crypto';
import { decodeEnvelope, type Envelope, type ReceivedEnvelope } from './envelope';
import { FACT_EVENTS, FACT_STORE, factsVisibleTo, type FactEventMap, type FactStoredData } from './fact-store';
import { loadAgentKey, resolveMacKey } from './keys';
import { HANDOFF_EVENTS, HANDOFF_STORE, type AcceptedData, type Ledger, type MintedData } from './ledger';
import { mintPackage, type Signer } from './mint';
import type { TaskRecord } from './task-record';

export const DEFAULT_TTL_MS = 24 * 3_600_000;
export const DEFAULT_MAX_AGE_MS = 24 * 3_600_000;

export interface HandoffScope {
  readonly dir: JournalStore;
  readonly now: Instant;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly actor: string | undefined;
}

export const tsOf = (scope: HandoffScope) => formatTime(scope.now);

export interface MintCommand {
  readonly sessionId: LogicalSessionId;
  readonly from: AgentName;
  readonly to: AgentName | null;
  readonly message: string | null;
  readonly ttlMs: number;
  readonly includeFacts: boolean;
  readonly taskRecord: TaskRecord | undefined;
  readonly alg: SignatureAlg;
  readonly handoffId: HandoffId;
}

export interface MintResult {
  readonly envelope: Envelope;
  readonly minted: MintedData;
  /** Set when a Crux daemon could not deserialize the package (a warning: crux mints it all the same). */
  readonly daemonIncompatible: string | undefined;
}

export function mintHandoff(scope: HandoffScope, cmd: MintCommand): Promise<MintResult> {
  return scope.dir.write(async (tx) => {
    const key = scopeSessionId(cmd.from, cmd.sessionId);
    const sessions = await tx.loadKey(SESSION_STORE, key);
    const record = requireSession(sessions, key);
    // The machine decides first (exit 3/4 before any key is made or anything written).
    const handOff = decideHandOff(sessions, key, cmd.handoffId, scope.actor);
    const facts = cmd.includeFacts ? factsVisibleTo(await tx.load(FACT_STORE), cmd.from) : [];
    const minted = await mintSigned(scope, cmd, (signer) =>
      mintPackage({
        sessionId: cmd.sessionId,
        state: stateText(record),
        source: cmd.from,
        target: cmd.to,
        message: cmd.message,
        taskRecord: cmd.taskRecord,
        facts,
        handoffId: cmd.handoffId,
        now: scope.now,
        ttlMs: cmd.ttlMs,
        signer,
      }),
    );
    const data: MintedData = {
      handoff_id: cmd.handoffId,
      session_id: cmd.sessionId,
      source_agent: cmd.from,
      target_agent: cmd.to,
      created_at: minted.draft.created_at,
      expires_at: minted.draft.expires_at!,
      content_hash: minted.content_hash,
      signature_alg: cmd.alg,
      facts: minted.facts,
      work_ids: minted.draft.work_ids.length,
      message: minted.draft.message,
      envelope: minted.envelope,
    };
    // The record first: a crash before the session moves leaves an exportable package, never a lost one.
    tx.append(HANDOFF_STORE, [{ ev: HANDOFF_EVENTS.minted, data, actor: scope.actor }]);
    tx.append(SESSION_STORE, handOff);
    return { envelope: minted.envelope, minted: data, daemonIncompatible: minted.daemonIncompatible };
  }, tsOf(scope));
}

/** Thrown by the MAC key of a first mint when the package fits: the key is made only then. */
class KeyNeeded extends Error {}

/**
 * Mints with the right signer. The first MAC mint of a data directory makes the key file, but only once the
 * package is known to fit (a refused mint makes no key): the mint runs first against a key that is not there.
 */
async function mintSigned<M>(scope: HandoffScope, cmd: MintCommand, mint: (signer: Signer) => M): Promise<M> {
  if (cmd.alg === MAC_ALG) {
    const existing = await resolveMacKey(scope.dir.keys, scope.env, { create: false });
    if (existing !== undefined) return mint({ alg: MAC_ALG, key: existing.key });
    try {
      return mint({
        alg: MAC_ALG,
        key: () => {
          throw new KeyNeeded();
        },
      });
    } catch (error) {
      if (!(error instanceof KeyNeeded)) throw error;
    }
    return mint({ alg: MAC_ALG, key: (await resolveMacKey(scope.dir.keys, scope.env, { create: true }))!.key });
  }
  const key = await loadAgentKey(scope.dir.keys, cmd.from);
  if (key === undefined) {
    throw notFound(`agent ${JSON.stringify(cmd.from)} has no Ed25519 key here`, `run \`crux handoff keygen --agent ${cmd.from}\` first`);
  }
  return mint({ alg: ED25519_ALG, privatePem: key.privatePem, keyId: key.key_id });
}

async function verify(
  scope: HandoffScope,
  received: ReceivedEnvelope,
  ledger: Ledger,
  opts: { receiver: string | undefined; maxAgeMs: number; strict: boolean },
): Promise<Verification> {
  const macKey = received.envelope.signature_alg === MAC_ALG ? await resolveMacKey(scope.dir.keys, scope.env, { create: false }) : undefined;
  return verifyPackage(received, {
    macKey: macKey && { key: macKey.key, source: macKey.label },
    trustedKeys: (agent) => ledger.trusted.get(agent) ?? [],
    revokedKeys: (agent) => ledger.revoked.get(agent) ?? [],
    receiver: opts.receiver,
    now: scope.now,
    maxAgeMs: opts.maxAgeMs,
    consumed: (hash) => ledger.accepted.has(hash),
    strict: opts.strict,
  });
}

export interface AcceptCommand {
  readonly receiver: AgentName;
  readonly maxAgeMs: number;
  readonly maxStateBytes: number;
}

export interface AcceptResult {
  readonly accepted: { session_id: string; agent: string; content_hash: string; facts: number };
  readonly handoff_id: string | null;
  readonly source_agent: string;
  readonly expires_at: string;
}

const replayed = () => new CruxError('replayed', 'the package was already accepted here', 'each package is accepted once; `crux handoff list` shows it');

/**
 * Every check (SPEC order), then one locked transaction: the consumed set is checked again under the lock,
 * the session and facts are written, and the consumed mark is appended last — so of N racing accepts one
 * wins, and a crash before the mark leaves a package that can be accepted again.
 */
export async function acceptHandoff(scope: HandoffScope, input: Uint8Array, cmd: AcceptCommand): Promise<AcceptResult> {
  const received = decodeEnvelope(input);
  const v = await verify(scope, received, await scope.dir.read(HANDOFF_STORE), { receiver: cmd.receiver, maxAgeMs: cmd.maxAgeMs, strict: true });
  if (v.failure !== undefined) throw v.failure;
  const pkg = v.pkg!;
  const hash = received.envelope.content_hash;
  let sessionId: LogicalSessionId;
  try {
    sessionId = parseLogicalSessionId(pkg.session_id);
  } catch (error) {
    throw invalid(`the package's session_id cannot be stored: ${(error as Error).message}`);
  }
  const state = acceptStateDocument(Buffer.from(pkg.session_state ?? 'null', 'utf8'), cmd.maxStateBytes);
  const factDrafts: DraftOf<FactEventMap>[] = pkg.facts.map((f, i) => {
    const data: FactStoredData = { agent: cmd.receiver, fact_id: f.fact_id ?? `${hash.slice(0, 16)}#${i}`, package: hash, json: f.raw };
    return { ev: FACT_EVENTS.stored, data, actor: scope.actor };
  });
  const accepted: AcceptedData = {
    content_hash: hash,
    handoff_id: pkg.handoff_id,
    session_id: pkg.session_id,
    source_agent: pkg.source_agent,
    agent: cmd.receiver,
    target_agent: pkg.target_agent,
    created_at: pkg.created_at,
    expires_at: formatTime(v.expiresAt!),
    signature_alg: received.envelope.signature_alg,
    facts: factDrafts.length,
    message: pkg.message === null ? null : keptText(pkg.message),
  };
  return scope.dir.write(async (tx) => {
    if ((await tx.load(HANDOFF_STORE)).accepted.has(hash)) throw replayed();
    const receiver = scopeSessionId(cmd.receiver, sessionId);
    const sessions = await tx.loadKey(SESSION_STORE, receiver);
    const receive = decideReceive(sessions, receiver, { state, handoffId: pkg.handoff_id, actor: scope.actor });
    // Effects first, the consumed mark last.
    tx.append(SESSION_STORE, receive);
    tx.append(FACT_STORE, factDrafts);
    tx.append(HANDOFF_STORE, [{ ev: HANDOFF_EVENTS.accepted, data: accepted, actor: scope.actor }]);
    return {
      accepted: { session_id: pkg.session_id, agent: cmd.receiver, content_hash: hash, facts: factDrafts.length },
      handoff_id: pkg.handoff_id,
      source_agent: pkg.source_agent,
      expires_at: accepted.expires_at,
    };
  }, tsOf(scope));
}

export interface InspectResult {
  /** The payload's members as received (raw JSON text each), message and task record scrubbed; null when it does not decode. */
  readonly package: { key: string; raw: string }[] | null;
  readonly envelope: { content_hash: string; signature_alg: string; payload_bytes: number };
  readonly checks: Record<CheckName, CheckStatus>;
  readonly details: Record<CheckName, string>;
  readonly expires_at: string | null;
  readonly failure: CruxError | undefined;
}

const SCRUBBED_MEMBERS = new Set(['message', 'task_record']);

function scrubJson(value: unknown): unknown {
  if (typeof value === 'string') return keptText(value);
  if (Array.isArray(value)) return value.map(scrubJson);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubJson(v)]));
  return value;
}

/** Decodes without trusting and runs every check; writes nothing. The failure (if any) is returned, not thrown. */
export async function inspectHandoff(scope: HandoffScope, input: Uint8Array, opts: { receiver: string | undefined; maxAgeMs: number }): Promise<InspectResult> {
  const received = decodeEnvelope(input);
  const v = await verify(scope, received, await scope.dir.read(HANDOFF_STORE), { ...opts, strict: false });
  let members: { key: string; raw: string }[] | null = null;
  try {
    members = objectMembers(Buffer.from(received.payload).toString('utf8')).map(({ key, raw }) =>
      SCRUBBED_MEMBERS.has(key) ? { key, raw: JSON.stringify(scrubJson(JSON.parse(raw))) } : { key, raw },
    );
  } catch {
    members = null;
  }
  const checks = {} as Record<CheckName, CheckStatus>;
  const details = {} as Record<CheckName, string>;
  for (const name of CHECK_NAMES) {
    checks[name] = v.checks[name].status;
    details[name] = keptText(v.checks[name].detail);
  }
  return {
    package: members,
    envelope: { content_hash: received.envelope.content_hash, signature_alg: received.envelope.signature_alg, payload_bytes: received.payload.length },
    checks,
    details,
    expires_at: v.expiresAt === undefined ? null : formatTime(v.expiresAt),
    failure: v.failure,
  };
}
