// The wire envelope, the daemon's SignedHandoff: {payload_b64, content_hash, signature_b64, signature_alg}.
import { invalid } from '../../shared/errors';

export interface Envelope {
  readonly payload_b64: string;
  readonly content_hash: string;
  readonly signature_b64: string;
  readonly signature_alg: string;
}

/** Input larger than this is refused before any decoding (a package is a few KiB; a state at most 1 MiB). */
export const MAX_ENVELOPE_BYTES = 8 * 1024 * 1024;

const ENVELOPE_FIELDS = ['payload_b64', 'content_hash', 'signature_b64', 'signature_alg'] as const;
// The alphabet, then at most two "=" at the end; the length and the padding are checked apart (a regex that
// repeats a 4-character group overflows the stack on a payload of a few MB, far below the 8 MiB limit).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

/** Standard base64 with padding, as the daemon (base64 STANDARD engine) writes it. */
export const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');

/** Strict standard base64: the alphabet, the padding, and canonical trailing bits; undefined otherwise. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0 || !BASE64_CHARS.test(text)) return undefined;
  const buf = Buffer.from(text, 'base64');
  if (buf.toString('base64') !== text) return undefined;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}

/** The envelope's JSON text, fields in the daemon's order. */
export function encodeEnvelope(e: Envelope): string {
  return `{${ENVELOPE_FIELDS.map((k) => `${JSON.stringify(k)}:${JSON.stringify(e[k])}`).join(',')}}`;
}

export interface ReceivedEnvelope {
  readonly envelope: Envelope;
  /** The payload bytes exactly as received: everything is verified over these, never over a re-encoding. */
  readonly payload: Uint8Array;
}

const hint = 'give the envelope JSON that `crux handoff mint` (or a Crux daemon) printed';

/** Decodes an envelope (exit 5 for input that is too large, not JSON, missing fields, or not base64). */
export function decodeEnvelope(input: Uint8Array): ReceivedEnvelope {
  if (input.length > MAX_ENVELOPE_BYTES) {
    throw invalid(`the package is ${input.length} bytes, over the limit of ${MAX_ENVELOPE_BYTES} (8 MiB)`, 'nothing was decoded');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(input);
  } catch {
    throw invalid('the package is not UTF-8 text', hint);
  }
  if (text.trim() === '') throw invalid('the package is empty', hint);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(`the package is not JSON: ${(error as Error).message}`, hint);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('the package is not a JSON object', hint);
  const fields = value as Record<string, unknown>;
  const missing = ENVELOPE_FIELDS.filter((k) => fields[k] === undefined);
  if (missing.length > 0) throw invalid(`the package envelope has no ${missing.join(', ')}`, hint);
  for (const k of ENVELOPE_FIELDS) {
    if (typeof fields[k] !== 'string') throw invalid(`the package envelope's ${k} is not a string`, hint);
  }
  const envelope = fields as unknown as Envelope;
  const payload = fromBase64(envelope.payload_b64);
  if (payload === undefined) throw invalid('the package payload_b64 is not standard base64 (with padding)', hint);
  return {
    envelope: {
      payload_b64: envelope.payload_b64,
      content_hash: envelope.content_hash,
      signature_b64: envelope.signature_b64,
      signature_alg: envelope.signature_alg,
    },
    payload,
  };
}
