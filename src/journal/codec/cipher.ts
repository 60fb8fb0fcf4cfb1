// The record cipher (SPEC §13): on an encrypted store the fields a journal declares sealed (StoreSpec.sealed:
// session states, every free-text field, handoff messages and packages, case text, facts) lie in its records as ciphertext, each
// value on its own:
//
//   crux-sealed-v1:<key id>:<base64url of nonce (12 bytes) ‖ AES-256-GCM ciphertext ‖ tag (16 bytes)>
//
// A fresh random nonce per value; the value's place — the journal, the entity the record concerns (a session's
// stored id, a case id), the field's name — is bound as associated data, so a value moved to another entity,
// field or journal does not open. Everything else of a record (ids, agents, times, statuses, outcome names, tags,
// sizes) stays plain, and the chain is over the ciphertext: lists, reaping, `journal check`, compaction and
// doctor work without the key. A sealed value is carried through folds, snapshots and cache/ as it is, and opened
// only where a command shows or uses its plaintext (openSealed); its size (GCM adds no padding) is known without
// the key (sealedBytes).
import type { EventDraft } from './record';
import type { SealedFields, StoreSpec } from './store-spec';
import { keyNeeded, type StoreKey } from '../../shared/store-key';
import { CruxError } from '../../shared/errors';

const SEALED_PREFIX = 'crux-sealed-v1:';
const SEALED = /^crux-sealed-v1:(k-[0-9a-f]{16}):([A-Za-z0-9_-]{38,})$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** Where a sealed value sits: bound as associated data. */
export interface SealedPlace {
  readonly file: string;
  readonly entity: string;
  readonly field: string;
}

/**
 * How this process treats the store it writes: `plain` (no key, or a key given to a plain store: ignored),
 * `sealing` (an encrypted store with its key, or a new store given one), `locked` (an encrypted store without
 * its key, or with another).
 */
/** The key item that records which key a store is encrypted with (keys/ on a data directory, the keys table). */
export const STORE_KEY_ITEM = 'store-key.json';

export type SealMode = { readonly kind: 'plain' } | { readonly kind: 'sealing'; readonly key: StoreKey } | { readonly kind: 'locked'; readonly keyId: string };

interface CipherSetup {
  /** The key the invocation gave (--key-file, CRUX_KEY_FILE). */
  readonly key: StoreKey | undefined;
  /** Asked (once) when a write carries a value to seal: what the store is, and records a new store's key id. */
  readonly mode: () => SealMode;
  /** What the store is, for a read (records nothing: a new store is plain until its first write); `mode` when absent. */
  readonly known?: () => SealMode;
}

let setup: CipherSetup = { key: undefined, mode: () => ({ kind: 'plain' }) };
let decided: SealMode | undefined;

/** Sets how this process seals and opens (the command's context: its key, and how to tell what the store is). */
export function configureCipher(next: CipherSetup): void {
  setup = next;
  decided = undefined;
}

/** The key this invocation gave, if any. */
export const givenKey = (): StoreKey | undefined => setup.key;

const crypto = () => require('node:crypto') as typeof import('node:crypto');

const aad = (place: SealedPlace) => Buffer.from(`crux-sealed-v1\0${place.file}\0${place.entity}\0${place.field}`);

/** Whether `value` is a sealed value (a string of the sealed form). */
export const isSealed = (value: unknown): value is string => typeof value === 'string' && value.startsWith(SEALED_PREFIX) && SEALED.test(value);

/** The id of the key a sealed value needs, or undefined for a plain value. */
export const sealedKeyId = (value: unknown): string | undefined => (isSealed(value) ? SEALED.exec(value)![1] : undefined);

// Nonces are cut from a pool of random bytes, each used once (a call to randomBytes per value cost ~4 µs: a third
// of sealing an import of 100k cases).
const NONCE_POOL = NONCE_BYTES * 1024;
let pool: Buffer | undefined;
let poolAt = NONCE_POOL;

function freshNonce(): Buffer {
  if (poolAt === NONCE_POOL) {
    pool = crypto().randomBytes(NONCE_POOL);
    poolAt = 0;
  }
  poolAt += NONCE_BYTES;
  return pool!.subarray(poolAt - NONCE_BYTES, poolAt);
}

/** Seals `plain` with `key` at `place`. */
export function sealText(key: StoreKey, plain: string, place: SealedPlace): string {
  const { createCipheriv } = crypto();
  const nonce = freshNonce();
  const cipher = createCipheriv('aes-256-gcm', key.bytes, nonce);
  cipher.setAAD(aad(place));
  const body = Buffer.concat([nonce, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED_PREFIX}${key.id}:${body.toString('base64url')}`;
}

/**
 * The plaintext of a value as stored: a plain value as it is; a sealed one opened with `key` (by default the
 * invocation's), or exit 6 naming the key id it needs when none or another was given, or when it does not open
 * at its place (moved or altered).
 */
export function openSealed<T extends string | null>(value: T, place: SealedPlace, key: StoreKey | undefined = setup.key): T {
  if (!isSealed(value)) return value;
  const [, keyId, body] = SEALED.exec(value)!;
  if (key === undefined || key.id !== keyId) throw keyNeeded(keyId!, key);
  const bytes = Buffer.from(body!, 'base64url');
  const { createDecipheriv } = crypto();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(aad(place));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8') as T;
  } catch {
    throw new CruxError(
      'verification_failed',
      `a sealed ${place.field} of ${place.entity} in ${place.file} does not verify with key ${keyId} (altered, or moved from another record)`,
      'nothing was changed; run `crux journal check`, and restore the journal from a backup',
    );
  }
}

/** Bytes of a value's plaintext, known without the key for a sealed one (GCM adds no padding). */
export function sealedBytes(value: string): number {
  if (!isSealed(value)) return Buffer.byteLength(value);
  const body = value.slice(value.lastIndexOf(':') + 1);
  return Math.max(0, Math.floor((body.length * 3) / 4) - NONCE_BYTES - TAG_BYTES);
}

/** A payload's value at `name`: a field, or `a.b`, a field of an object field (a handoff's envelope). */
function valueAt(data: Record<string, unknown>, name: string): unknown {
  const dot = name.indexOf('.');
  if (dot < 0) return data[name];
  const inner = data[name.slice(0, dot)];
  return inner !== null && typeof inner === 'object' ? (inner as Record<string, unknown>)[name.slice(dot + 1)] : undefined;
}

/** `data` (a copy made by the caller) with `value` at `name`, copying the object a dotted name reaches into. */
function setAt(data: Record<string, unknown>, name: string, value: string): void {
  const dot = name.indexOf('.');
  if (dot < 0) data[name] = value;
  else data[name.slice(0, dot)] = { ...(data[name.slice(0, dot)] as Record<string, unknown>), [name.slice(dot + 1)]: value };
}

/** The fields of `draft` its store seals that hold text not yet sealed (null and absent values stay as they are), with their places. */
function textFields(sealed: SealedFields, draft: EventDraft): [string, string][] {
  const names = sealed.fields[draft.ev];
  if (names === undefined || draft.data === null || typeof draft.data !== 'object') return [];
  const data = draft.data as Record<string, unknown>;
  return Object.entries(names).filter(([name]) => typeof valueAt(data, name) === 'string' && !isSealed(valueAt(data, name)));
}

/**
 * How the store is for a read that derives what it looks for from the key (a case retrieve's words as keyed
 * hashes): sealing, locked (the caller refuses, exit 6 naming the key id) or plain.
 */
export const storeSealMode = (): SealMode => decided ?? setup.known?.() ?? modeNow();

/** How the store is, asked once per process (a write that seals nothing never asks). */
function modeNow(): SealMode {
  decided ??= setup.mode();
  return decided;
}

/**
 * The drafts as they are to be written: on an encrypted store (or a new one given a key) every text value of a
 * sealed field sealed at its place; on a plain store as they are. Writing text to an encrypted store without its
 * key is exit 6 naming the key id. Already sealed values (carried from the store itself) are kept as they are.
 */
export function sealDrafts(spec: StoreSpec<unknown>, drafts: readonly EventDraft[]): readonly EventDraft[] {
  const sealed = spec.sealed;
  if (sealed === undefined) return drafts;
  let mode: SealMode | undefined;
  let out: EventDraft[] | undefined;
  for (const [i, draft] of drafts.entries()) {
    const fields = textFields(sealed, draft);
    if (fields.length === 0) continue;
    mode ??= modeNow();
    if (mode.kind === 'plain') return drafts;
    if (mode.kind === 'locked') throw keyNeeded(mode.keyId, setup.key);
    const data = sealed.derive?.({ ...(draft.data as Record<string, unknown>) }, mode.key) ?? { ...(draft.data as Record<string, unknown>) };
    const entity = sealed.entity(data);
    for (const [name, field] of fields) setAt(data, name, sealText(mode.key, valueAt(data, name) as string, { file: spec.file, entity, field }));
    out ??= drafts.slice();
    out[i] = { ...draft, data };
  }
  return out ?? drafts;
}

/**
 * A value as a view shows it (a list, a write's answer): opened when the invocation gave its key, else
 * `[sealed:<key id>]` — a command that only lists needs no key (SPEC §13); one that exists to show the text
 * opens it with openSealed and refuses without the key.
 */
export function shownSealed(value: string | null, place: SealedPlace): string | null {
  if (!isSealed(value)) return value;
  const keyId = sealedKeyId(value)!;
  return setup.key?.id === keyId ? openSealed(value, place) : `[sealed:${keyId}]`;
}

/**
 * What `journal encrypt`, `rekey` and `decrypt` do to each record's sealed fields (through the one record-rewrite
 * path, core/rewrite.ts): open what is sealed with `from` (undefined: nothing is sealed yet, plain values stay
 * plain only when `to` is undefined), seal with `to` (undefined: leave plaintext). A value already sealed with
 * `to` is kept as it is, so that a run stopped midway can be run again. Returns the new data, or undefined when
 * nothing changed.
 */
export function resealData(
  spec: StoreSpec<unknown>,
  ev: string,
  data: unknown,
  from: StoreKey | undefined,
  to: StoreKey | undefined,
): Record<string, unknown> | undefined {
  const sealed = spec.sealed;
  const names = sealed?.fields[ev];
  if (sealed === undefined || names === undefined || data === null || typeof data !== 'object') return undefined;
  const given = data as Record<string, unknown>;
  const entity = sealed.entity(given);
  // The text open (with the key each value was sealed with: `to` for one a stopped run already resealed).
  let plain: Record<string, unknown> | undefined;
  for (const [name, field] of Object.entries(names)) {
    const value = valueAt(given, name);
    if (typeof value !== 'string' || !isSealed(value)) continue;
    plain ??= { ...given };
    setAt(plain, name, openSealed(value, { file: spec.file, entity, field }, to !== undefined && sealedKeyId(value) === to.id ? to : from));
  }
  const derived = sealed.derive?.(plain ?? { ...given }, to);
  let out: Record<string, unknown> | undefined = derived !== undefined && !sameJson(derived, plain ?? given) ? derived : undefined;
  for (const [name, field] of Object.entries(names)) {
    const value = valueAt(given, name);
    if (typeof value !== 'string') continue;
    if (to !== undefined && sealedKeyId(value) === to.id) {
      if (out !== undefined) setAt(out, name, value);
      continue;
    }
    if (to === undefined && !isSealed(value)) continue;
    out ??= { ...(plain ?? given) };
    const text = valueAt(plain ?? given, name) as string;
    setAt(out, name, to === undefined ? text : sealText(to, text, { file: spec.file, entity, field }));
  }
  return out;
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A quarantined item's bytes, sealed whole (its name is its place) or opened back; undefined: as they are. */
export function resealBytes(bytes: Buffer, name: string, from: StoreKey | undefined, to: StoreKey | undefined): Buffer | undefined {
  const text = bytes.toString('latin1');
  const place = { file: 'quarantine', entity: name, field: 'bytes' };
  if (to !== undefined && sealedKeyId(text) === to.id) return undefined;
  if (!isSealed(text)) return to === undefined ? undefined : Buffer.from(sealText(to, bytes.toString('base64'), place));
  const plain = Buffer.from(openSealed(text, place, from), 'base64');
  return to === undefined ? plain : Buffer.from(sealText(to, plain.toString('base64'), place));
}
