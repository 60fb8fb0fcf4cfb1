// Sessions that share one last write's time, in the order a replay lists them (byRecency: ties by stored key),
// for the data directory's newest-first reads: an import, a fixed clock or the bench give thousands one time,
// and a limited list whose limit falls among them read them all (the index orders equals by key hash). The
// prefixed name `tied` holds a tag of the time, then the key: the index keeps its first 7 bytes in order (the
// key's first 6 characters), so the sessions of one time are read in key order as far as the list needs.
import { STATUS_STRIDE, TIME_SHIFT } from './status-key';

/** The secondary name (fold.ts lists it). */
export const TIED_INDEX = 'tied';

/** The first `n` of two printable characters (# to ~) from a text's FNV-1a hash (fold.ts's scope tags too). */
export function hashTag(text: string, n: 1 | 2): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h >>>= 0;
  const first = String.fromCharCode(0x23 + (h % 92));
  return n === 1 ? first : `${first}${String.fromCharCode(0x23 + (Math.floor(h / 92) % 92))}`;
}

/** One character from a hash of the time: the times that share it only add candidates. */
const tag = (ms: number): string => hashTag(String(ms), 1);

/** A session's value of `tied`: its time's tag, then its stored key (undefined without a time). */
export const tiedValue = (key: string, updated: number | undefined): string | undefined => (updated === undefined ? undefined : `${tag(updated)}${key}`);

/** Ordered names whose ties a list breaks by stored key, and how a value of each holds the time (status-key.ts). */
const PLAIN = new Set(['strandable_updated', 'listed_updated', 'all_updated'].flatMap((n) => [n, `unscoped_${n}`, `scoped_${n}`]));
const BY_STATUS = new Set(['status_updated', 'unscoped_status_updated', 'scoped_status_updated']);

/**
 * The read by prefix that holds, in stored-key order, every session whose value of the ordered name `index` is
 * `value` (SecondaryKeys.tied): the sessions of that time. Undefined for another name, or a value that may stand
 * for several times (clamped at a range's edge: before 1970, or no time).
 */
export function tiedRead(index: string, value: number): { index: string; prefix: string } | undefined {
  let ms: number | undefined;
  if (PLAIN.has(index)) ms = value > 0 && value < 2 ** 53 ? value : undefined;
  else if (BY_STATUS.has(index)) {
    const inRange = value % STATUS_STRIDE;
    ms = inRange > 0 && inRange < STATUS_STRIDE - 1 ? inRange - TIME_SHIFT : undefined;
  }
  return ms === undefined ? undefined : { index: TIED_INDEX, prefix: tag(ms) };
}
