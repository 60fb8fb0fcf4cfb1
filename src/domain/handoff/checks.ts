// The accept checks, in SPEC order, as one pure function: each check's result, and the first failure's error.
//
//   1. algorithm     signature_alg is blake3-mac-v1 or ed25519                      exit 6
//   2. content_hash  BLAKE3(payload bytes) equals content_hash                        exit 6
//   3. signature     keyed-BLAKE3 MAC (constant-time compare) or Ed25519 signature
//                    by a trusted key of source_agent                                 exit 6
//   4. payload       the (now authenticated) bytes are a well-formed package          exit 5
//   5. target        target_agent, when named, equals the receiver (--as)             exit 6
//   6. expiry        now ≤ expires_at, or ≤ created_at + max-age without expires_at   exit 7
//   7. replay        content_hash is not in the consumed set                          exit 8
//   +  daemon_compatible  the Crux daemon's serde_json could read the payload       never refuses
//                    (numbers in f64 range, no lone surrogate escape, nesting ≤ 127)
//
// The payload is parsed only after the bytes are authenticated (for Ed25519 the signer's name is read from
// the payload first, then the signature decides), so a tampered payload is a verification failure (6), not
// a malformed input (5).
import { CruxError } from '../../shared/errors';
import { formatTime, type Instant } from '../../shared/time';
import { constantTimeEqual, contentHashOf, ED25519_ALG, MAC_ALG, macOf, SUPPORTED_ALGS, verifyEd25519 } from './crypto';
import { fromBase64, type ReceivedEnvelope } from './envelope';
import { decodePackage, type DecodedPackage } from './package';
import { serdeIncompatibility } from '../../shared/json-text';

/** The checks that refuse a package, in SPEC order. */
const REFUSING_CHECKS = ['algorithm', 'content_hash', 'signature', 'payload', 'target', 'expiry', 'replay'] as const;
/** Every check inspect reports: the refusing ones, then whether a Crux daemon could read the package (advice only). */
export const CHECK_NAMES = [...REFUSING_CHECKS, 'daemon_compatible'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];
type RefusingCheck = (typeof REFUSING_CHECKS)[number];
export type CheckStatus = 'ok' | 'failed' | 'skipped';

export interface CheckResult {
  readonly status: CheckStatus;
  readonly detail: string;
}

export interface TrustedKey {
  readonly public_key: string;
  readonly key_id: string;
}

export interface CheckContext {
  /** The MAC key at hand (with where it came from), or undefined when there is none. */
  readonly macKey: { readonly key: Uint8Array; readonly source: string } | undefined;
  /** The trusted Ed25519 keys of an agent (the keyring). */
  readonly trustedKeys: (agent: string) => readonly TrustedKey[];
  /** The Ed25519 keys of an agent revoked here (`crux handoff untrust`): what they sign is refused. */
  readonly revokedKeys: (agent: string) => readonly TrustedKey[];
  /** The receiving agent (--as); undefined for an inspect without one. */
  readonly receiver: string | undefined;
  readonly now: Instant;
  /** How long a package without expires_at stays acceptable after created_at. */
  readonly maxAgeMs: number;
  readonly consumed: (contentHash: string) => boolean;
  /** Accept: a check that cannot run (no key at hand) fails. Inspect: it is skipped. */
  readonly strict: boolean;
}

export interface Verification {
  readonly checks: Record<CheckName, CheckResult>;
  /** The package, when the payload decodes (inspect shows it even when a check failed). */
  readonly pkg: DecodedPackage | undefined;
  /** When the package stops being acceptable. */
  readonly expiresAt: Instant | undefined;
  /** The first failed check in SPEC order, as the error accept and inspect exit with. */
  readonly failure: CruxError | undefined;
}

const KIND: Record<RefusingCheck, CruxError['kind']> = {
  algorithm: 'verification_failed',
  content_hash: 'verification_failed',
  signature: 'verification_failed',
  payload: 'invalid_input',
  target: 'verification_failed',
  expiry: 'expired',
  replay: 'replayed',
};

const ok = (detail: string): CheckResult => ({ status: 'ok', detail });
const failed = (detail: string): CheckResult => ({ status: 'failed', detail });
const skipped = (detail: string): CheckResult => ({ status: 'skipped', detail });

export function verifyPackage(received: ReceivedEnvelope, ctx: CheckContext): Verification {
  const { envelope, payload } = received;
  const checks = {} as Record<CheckName, CheckResult>;
  const alg = envelope.signature_alg;

  checks.algorithm = SUPPORTED_ALGS.includes(alg)
    ? ok(alg)
    : failed(`unsupported signature algorithm ${JSON.stringify(alg.slice(0, 40))} (supported: ${SUPPORTED_ALGS.join(', ')})`);

  const actual = contentHashOf(payload);
  checks.content_hash =
    actual === envelope.content_hash
      ? ok(actual)
      : failed(`content hash mismatch: the payload hashes to ${actual}, the envelope says ${JSON.stringify(envelope.content_hash.slice(0, 80))}`);

  let pkg: DecodedPackage | undefined;
  let payloadError: CruxError | undefined;
  try {
    pkg = decodePackage(payload);
  } catch (error) {
    if (!(error instanceof CruxError)) throw error;
    payloadError = error;
  }

  checks.signature = checkSignature(received, pkg, ctx);
  checks.payload = pkg !== undefined ? ok('a well-formed package') : failed(payloadError!.message.replace(/^the package payload /, ''));

  if (pkg === undefined) checks.target = skipped('the payload does not decode');
  else if (pkg.target_agent === null) checks.target = ok('the package names no target agent');
  else if (ctx.receiver === undefined) checks.target = skipped(`addressed to ${JSON.stringify(pkg.target_agent)}; no receiver given (--as)`);
  else if (pkg.target_agent === ctx.receiver) checks.target = ok(pkg.target_agent);
  else checks.target = failed(`the package is addressed to ${JSON.stringify(pkg.target_agent)}, not ${JSON.stringify(ctx.receiver)}`);

  let expiresAt: Instant | undefined;
  if (pkg === undefined) checks.expiry = skipped('the payload does not decode');
  else {
    expiresAt = pkg.expires ?? pkg.created + ctx.maxAgeMs;
    const basis = pkg.expires !== null ? 'expires_at' : `created_at + max-age`;
    checks.expiry =
      ctx.now > expiresAt
        ? failed(`the package expired at ${formatTime(expiresAt)} (${basis}); it is now ${formatTime(ctx.now)}`)
        : ok(`valid until ${formatTime(expiresAt)} (${basis})`);
  }

  checks.replay = ctx.consumed(envelope.content_hash) || ctx.consumed(actual) ? failed('the package was already accepted here') : ok('not accepted before');

  if (pkg === undefined) checks.daemon_compatible = skipped('the payload does not decode');
  else {
    const reason = serdeIncompatibility(Buffer.from(payload).toString('utf8'));
    checks.daemon_compatible = reason === undefined ? ok("a Crux daemon's serde_json reads it") : failed(daemonIncompatible(reason));
  }

  const first = REFUSING_CHECKS.find((name) => checks[name].status === 'failed');
  const failure = first === undefined ? undefined : errorFor(first, checks[first].detail);
  return { checks, pkg, expiresAt, failure };
}

/** What mint warns and inspect reports when a Crux daemon could not deserialize a package crux accepts. */
export const daemonIncompatible = (reason: string) => `a Crux daemon could not read this package: ${reason}; crux accepts it`;

function errorFor(check: RefusingCheck, detail: string): CruxError {
  const hints: Record<RefusingCheck, string> = {
    algorithm: 'crux accepts blake3-mac-v1 and ed25519 packages',
    content_hash: 'the package was altered in transit; ask for it again (`crux handoff export <id>` on the minting side)',
    signature: 'the package was not minted with a key this side holds or trusts',
    payload: 'the package is damaged or was not made by crux or a Crux daemon',
    target: 'accept it as the agent it is addressed to (--as)',
    expiry: 'ask the sender to mint a fresh package (or raise --max-age for a package without expires_at)',
    replay: 'each package is accepted once; `crux handoff list` shows it',
  };
  const what = check === 'payload' ? `the package payload ${detail}` : detail;
  return new CruxError(KIND[check], what, hints[check]);
}

function checkSignature(received: ReceivedEnvelope, pkg: DecodedPackage | undefined, ctx: CheckContext): CheckResult {
  const { envelope, payload } = received;
  const alg = envelope.signature_alg;
  if (!SUPPORTED_ALGS.includes(alg)) return skipped('unsupported algorithm');
  const signature = fromBase64(envelope.signature_b64);
  if (signature === undefined) return failed('signature_b64 is not standard base64');
  const noKey = (detail: string) => (ctx.strict ? failed(detail) : skipped(detail));

  if (alg === MAC_ALG) {
    if (ctx.macKey === undefined)
      return noKey('no handoff key at hand to check the MAC (no keys/handoff.key, no CRUX_HANDOFF_SECRET or CRUX_MCP_HANDOFF_SECRET)');
    const expected = macOf(ctx.macKey.key, payload);
    return constantTimeEqual(expected, signature)
      ? ok(`MAC verified with the ${ctx.macKey.source}`)
      : failed(`MAC mismatch: the package was not minted with the ${ctx.macKey.source}`);
  }

  // ed25519: the signer's name and key id come from the payload, the signature then decides.
  if (alg !== ED25519_ALG) return skipped('unsupported algorithm');
  if (pkg === undefined) return failed('the payload does not decode, so its signer cannot be identified');
  const keys = ctx.trustedKeys(pkg.source_agent);
  // A revoked key fails the check even where no key is trusted (inspect does not merely skip it).
  const revoked = ctx
    .revokedKeys(pkg.source_agent)
    .find((k) => (pkg.key_id !== null ? k.key_id === pkg.key_id : verifyEd25519(k.public_key, payload, signature)));
  if (revoked !== undefined) {
    return failed(`agent ${JSON.stringify(pkg.source_agent)} signed with key ${revoked.key_id}, which was revoked here (\`crux handoff untrust\`)`);
  }
  if (keys.length === 0) return noKey(`no trusted Ed25519 key for agent ${JSON.stringify(pkg.source_agent)} (see \`crux handoff trust\`)`);
  const candidates = pkg.key_id === null ? keys : keys.filter((k) => k.key_id === pkg.key_id);
  if (candidates.length === 0) {
    return failed(`agent ${JSON.stringify(pkg.source_agent)} signed with key ${JSON.stringify(pkg.key_id)}, which is not trusted here`);
  }
  for (const k of candidates) {
    if (verifyEd25519(k.public_key, payload, signature)) return ok(`Ed25519 signature of ${JSON.stringify(pkg.source_agent)} (key ${k.key_id})`);
  }
  return failed(`the Ed25519 signature does not verify with the trusted key of ${JSON.stringify(pkg.source_agent)}`);
}
