// The record codec: one JSON object per line, self-hashed and chained to the record before it.
//
//   {"v":1,"seq":7,"ts":"2026-11-29T21:00:00.000Z","ev":"session.put","actor":"ops","data":{…},"p":"<prev h>","h":"<h>"}
//
// The first record of a multi-record append (one batch) carries `"batch":N` after `seq`; replay applies the N
// records only once the last of them is there (see scan.ts).
//
// h = first 32 hex digits of SHA-256 over the line with the `,"h":"…"` member removed. `p` repeats the
// previous record's h (GENESIS for the first record of a chain). A damaged line fails its own hash; a
// deleted or reordered line breaks the `p` chain and the contiguous `seq`.

import { sha256Hex } from '../../shared/sha256';

const FORMAT_VERSION = 1;
export const GENESIS = '0'.repeat(32);
const HASH_HEX = 32;
// `,"h":"` + 32 hex + `"}`
const HASH_SUFFIX_LENGTH = 6 + HASH_HEX + 2;
const HEX = /^[0-9a-f]{32}$/;

/** An event as a store hands it to the journal. */
export interface EventDraft {
  readonly ev: string;
  readonly data: unknown;
  readonly actor?: string | undefined;
  /** Only when rewriting history (repair): the record's original time. */
  readonly ts?: string | undefined;
}

/** A verified record as replay hands it to a store. */
export interface JournalRecord {
  readonly seq: number;
  readonly ts: string;
  readonly ev: string;
  readonly actor?: string;
  /** On the first record of a batch of two or more (one command's records): how many records it has. */
  readonly batch?: number;
  readonly data: any;
  readonly p: string;
  readonly h: string;
}

export interface ChainHead {
  readonly seq: number;
  readonly h: string;
}

export const EMPTY_HEAD: ChainHead = { seq: 0, h: GENESIS };

// SHA-256 of a line (shared/sha256.ts says how: WebAssembly, node:crypto for a replay).
const lineHash = (body: string): string => sha256Hex(body).slice(0, HASH_HEX);

/**
 * Encodes drafts as the lines that follow `head`; returns the text (each line ends in \n) and the new head.
 * With `batch`, two or more drafts are marked as one batch: the first record carries `"batch":N`.
 */
/** Records between two progress reports of long work (a call each, never a clock read). */
export const PROGRESS_EVERY = 1024;

export function encodeRecords(
  head: ChainHead,
  drafts: readonly EventDraft[],
  ts: string,
  opts: { batch?: boolean; onProgress?: ((done: number, total: number) => void) | undefined } = {},
): { text: string; head: ChainHead } {
  let { seq, h } = head;
  let text = '';
  const batch = opts.batch === true && drafts.length > 1 ? `,"batch":${drafts.length}` : '';
  for (const draft of drafts) {
    seq += 1;
    const actor = draft.actor === undefined ? '' : `,"actor":${JSON.stringify(draft.actor)}`;
    const mark = seq === head.seq + 1 ? batch : '';
    const body = `{"v":${FORMAT_VERSION},"seq":${seq}${mark},"ts":${JSON.stringify(draft.ts ?? ts)},"ev":${JSON.stringify(draft.ev)}${actor},"data":${JSON.stringify(draft.data ?? null)},"p":"${h}"}`;
    h = lineHash(body);
    text += `${body.slice(0, -1)},"h":"${h}"}\n`;
    if (opts.onProgress !== undefined && (seq - head.seq) % PROGRESS_EVERY === 0) opts.onProgress(seq - head.seq, drafts.length);
  }
  return { text, head: { seq, h } };
}

export type DecodeResult =
  | { readonly ok: true; readonly record: JournalRecord }
  | { readonly ok: false; readonly reason: string; readonly h?: string; readonly seq?: number };

/**
 * How much a read checks of each record it decodes (after LevelDB's read options: named, never implied).
 * Every policy checks the format version and the record's fields; what differs is whether the hash is
 * recomputed.
 */
export interface VerifyPolicy {
  /** Recompute each record's hash over its bytes and compare it with `h` (LevelDB's `verify_checksums`). */
  readonly verifyChecksums: boolean;
}

/** Replay, check, repair, anything that reads a line no verified cache vouches for: every byte is checked. */
export const VERIFY_ALL: VerifyPolicy = { verifyChecksums: true };
/**
 * Lines a verified cache vouches for (the key index or snapshot that names the journal exactly as a writer left
 * it after verifying it) and lines this process just encoded: the hash is not recomputed. `journal check` never
 * reads this way.
 */
export const TRUST_VOUCHED: VerifyPolicy = { verifyChecksums: false };

/**
 * The one decoder of a record line (without its \n), for every read path: scan, loads by key, snapshot tails,
 * check, the PostgreSQL rows. Never throws: what is wrong is the reason.
 */
export function decodeRecord(line: string, policy: VerifyPolicy): DecodeResult {
  let value: any;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: line.includes('\u0000') ? 'bad JSON (NUL bytes)' : 'bad JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'not a record' };
  const { v, seq, ts, ev, p, h, batch } = value;
  const seqOk = Number.isSafeInteger(seq) && seq > 0;
  if (typeof h !== 'string' || !HEX.test(h) || !line.endsWith(`,"h":"${h}"}`)) {
    return { ok: false, reason: 'not a record (no hash)' };
  }
  if (v !== FORMAT_VERSION) return { ok: false, reason: `unsupported format version ${JSON.stringify(v)}`, h };
  if (!seqOk || typeof ts !== 'string' || typeof ev !== 'string' || typeof p !== 'string' || !('data' in value)) {
    return { ok: false, reason: 'not a record (missing fields)', h };
  }
  if (value.actor !== undefined && typeof value.actor !== 'string') return { ok: false, reason: 'not a record (actor)', h };
  if (batch !== undefined && !(Number.isSafeInteger(batch) && batch >= 2)) return { ok: false, reason: 'not a record (batch)', h, seq };
  if (policy.verifyChecksums) {
    const body = `${line.slice(0, -HASH_SUFFIX_LENGTH)}}`;
    if (lineHash(body) !== h) return { ok: false, reason: 'hash mismatch', h, seq };
  }
  return { ok: true, record: value as JournalRecord };
}

/** Decodes a line this process just encoded (applying a transaction's own records): it cannot fail. */
export function decodeOwn(line: string): JournalRecord {
  const decoded = decodeRecord(line, TRUST_VOUCHED);
  if (!decoded.ok) throw new Error(`a record just encoded does not decode: ${decoded.reason}`);
  return decoded.record;
}
