// Branded identities: raw strings are parsed once at the edge and cannot be confused afterwards.
import { invalid } from './errors';

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** The id an agent uses for its session (what it typed). */
export type LogicalSessionId = Brand<string, 'LogicalSessionId'>;
/** The id a session is stored under: the logical id, or `__agent_session::<agent>::<logical>`. */
export type ScopedSessionId = Brand<string, 'ScopedSessionId'>;
export type AgentName = Brand<string, 'AgentName'>;
export type ActorName = Brand<string, 'ActorName'>;
export type CaseId = Brand<string, 'CaseId'>;
export type HandoffId = Brand<string, 'HandoffId'>;

const MAX_NAME_CHARS = 256;
const SCOPE_PREFIX = '__agent_session::';

// C0, DEL and C1 control characters.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Characters that make two different ids look the same: format characters (Cf: bidi overrides such as U+202E,
// zero-width U+200B, U+FEFF), the line and paragraph separators, and U+FFFD, which is what invalid UTF-8 on
// argv decodes to ($'\xff\xfe' and $'\xfe\xff' would both become "\uFFFD\uFFFD" and overwrite each other).
// Made on first use, and only for a name with something beyond printable ASCII: creating a \p{…} class costs
// ~3 M instructions (ICU builds the set), a tenth of what a `session get` adds to Node's start.
const INVISIBLE_SOURCE = '[\\p{Cf}\\p{Zl}\\p{Zp}\\uFFFD]';
let invisibleOnce: RegExp | undefined;
const invisible = () => (invisibleOnce ??= new RegExp(INVISIBLE_SOURCE, 'u'));
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** A name quoted for a message: JSON's escapes, and every invisible character as \uXXXX. */
const quote = (raw: string) =>
  JSON.stringify(raw).replace(new RegExp(INVISIBLE_SOURCE, 'gu'), (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });

function checkName(what: string, raw: string): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalid(`${what} must not be empty`);
  // Printable ASCII: one character per code unit, and no control, invisible or ill-formed one.
  const ascii = PRINTABLE_ASCII.test(raw);
  if ((ascii ? raw.length : [...raw].length) > MAX_NAME_CHARS) throw invalid(`${what} is longer than ${MAX_NAME_CHARS} characters`);
  if (raw.includes('::')) throw invalid(`${what} must not contain "::": ${quote(raw)}`);
  if (ascii) return raw;
  if (CONTROL.test(raw)) throw invalid(`${what} must not contain control characters: ${quote(raw)}`);
  if (!raw.isWellFormed()) throw invalid(`${what} is not well-formed Unicode`);
  const found = invisible().exec(raw);
  if (found !== null) {
    const code = `U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    const why = found[0] === '\uFFFD' ? 'the replacement character U+FFFD (invalid UTF-8?)' : `an invisible or format character (${code})`;
    throw invalid(`${what} must not contain ${why}: ${quote(raw)}`, 'ids that look the same must be the same id: use visible characters only');
  }
  return raw;
}

/**
 * A part of a scoped session id (`__agent_session::<agent>::<id>`): besides checkName, no `:` at either end,
 * or agent `a:` with id `x` and agent `a` with id `:x` would both be stored under `__agent_session::a:::x`.
 */
function checkScopePart(what: string, raw: string): string {
  checkName(what, raw);
  if (raw.startsWith(':') || raw.endsWith(':'))
    throw invalid(`${what} must not begin or end with ":": ${JSON.stringify(raw)}`, 'a scoped id joins agent and id with "::"');
  return raw;
}

export const parseLogicalSessionId = (raw: string) => checkScopePart('session id', raw) as LogicalSessionId;
export const parseAgentName = (raw: string) => checkScopePart('agent name', raw) as AgentName;
export const parseActorName = (raw: string) => checkName('actor name', raw) as ActorName;
export const parseCaseId = (raw: string) => checkName('case id', raw) as CaseId;

export function scopeSessionId(agent: AgentName | undefined, id: LogicalSessionId): ScopedSessionId {
  return (agent === undefined ? id : `${SCOPE_PREFIX}${agent}::${id}`) as ScopedSessionId;
}

/** Splits a stored id back into its agent and logical id; unscoped ids have no agent. */
export function unscopeSessionId(scoped: ScopedSessionId): { agent?: AgentName; id: LogicalSessionId } {
  if (!scoped.startsWith(SCOPE_PREFIX)) return { id: scoped as unknown as LogicalSessionId };
  const rest = scoped.slice(SCOPE_PREFIX.length);
  const cut = rest.indexOf('::');
  return { agent: rest.slice(0, cut) as AgentName, id: rest.slice(cut + 2) as LogicalSessionId };
}

/** An id with a readable prefix (`c_` for cases, `h_` for handoffs) over 12 random bytes (shared/random.ts). */
export function newId<T extends CaseId | HandoffId>(prefix: 'c' | 'h', bytes: Uint8Array): T {
  return `${prefix}_${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}` as T;
}
