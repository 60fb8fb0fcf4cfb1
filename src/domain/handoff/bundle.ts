// What travels with a session: the facts it refers to and the work ids it names (the seed's bundling rules).
import { tryParseTime } from '../../shared/time';

/** A fact as crux holds it: its raw JSON (verbatim, never flattened) and the fields the rules read. */
export interface BundlableFact {
  readonly fact_id: string;
  readonly raw: string;
  readonly entity: string | null;
  readonly private: boolean;
  readonly deleted: boolean;
  readonly stored_at: string | null;
}

const DECISIONS_PREFIX = '__decisions__::';
const WORK_PREFIX = '__work__::';

/** Every string value of the state that starts with `f_`: the fact ids it refers to. */
function referencedFactIds(strings: readonly string[]): Set<string> {
  return new Set(strings.filter((s) => s.startsWith('f_')));
}

/** A fact's sort key: stored_at as a time to the nanosecond (ties then by fact_id); unparseable times first. */
function storedAtKey(raw: string | null): [number, number] {
  const at = tryParseTime(raw);
  if (at === undefined || raw === null) return [-Infinity, 0];
  const frac = /\.(\d{1,9})/.exec(raw)?.[1] ?? '';
  const nanos = Number(frac.padEnd(9, '0')) % 1_000_000;
  return [at, nanos];
}

function compareFacts(a: BundlableFact, b: BundlableFact): number {
  const [am, an] = storedAtKey(a.stored_at);
  const [bm, bn] = storedAtKey(b.stored_at);
  if (am !== bm) return am < bm ? -1 : 1;
  if (an !== bn) return an < bn ? -1 : 1;
  return compareUtf8(a.fact_id, b.fact_id);
}

/**
 * The facts a package bundles: not deleted, not private, and referenced by an `f_` id anywhere in the
 * state's strings, or about the session (entity = session id), or under `__decisions__::<session id>`.
 * Sorted by (stored_at, fact_id) so that the same inputs always mint the same bytes.
 */
export function selectFacts(state: unknown, sessionId: string, visible: readonly BundlableFact[]): BundlableFact[] {
  const referenced = referencedFactIds(collectStringValues(state));
  const decisions = `${DECISIONS_PREFIX}${sessionId}`;
  return visible
    .filter((f) => !f.deleted && !f.private)
    .filter((f) => referenced.has(f.fact_id) || f.entity === sessionId || f.entity === decisions || f.entity?.startsWith(`${decisions}::`))
    .sort(compareFacts);
}

/**
 * The work ids: state strings starting `w_` or `execplan:`, and the trailing `::` segment of the entity of
 * every bundled `__work__::` fact — a set, in byte order (the daemon's BTreeSet<String>).
 */
export function collectWorkIds(state: unknown, bundled: readonly BundlableFact[]): string[] {
  const ids = new Set(collectStringValues(state).filter((s) => s.startsWith('w_') || s.startsWith('execplan:')));
  for (const f of bundled) {
    if (f.entity === null || !f.entity.startsWith(WORK_PREFIX)) continue;
    const tail = f.entity.slice(f.entity.lastIndexOf('::') + 2);
    if (tail !== '') ids.add(tail);
  }
  return [...ids].sort(compareUtf8);
}

/** Every string value in a parsed JSON document (object keys excluded), in document order; iterative, so depth cannot overflow the stack. */
function collectStringValues(root: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i -= 1) stack.push(value[i]);
    else if (value !== null && typeof value === 'object') {
      const values = Object.values(value);
      for (let i = values.length - 1; i >= 0; i -= 1) stack.push(values[i]);
    }
  }
  return out;
}

/** Compares two strings by their UTF-8 bytes, the order of Rust's String and BTreeSet. */
function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
