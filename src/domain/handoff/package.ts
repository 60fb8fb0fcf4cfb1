// The package JSON, byte-compatible with the Crux daemon's HandoffPackage as serde_json writes it.
//
// How serde writes the daemon's struct (derive(Serialize), compact writer, no pretty printing):
//   - fields in declaration order, `"key":value` joined by `,`, no whitespace anywhere;
//   - `session_state: Option<Value>`, `target_agent` and `message: Option<String>` carry no
//     skip_serializing_if, so None is written as `null`, never omitted;
//   - `facts: Vec<Fact>` and `work_ids: Vec<String>` are always written, `[]` when empty;
//   - `task_record: Option<TaskRecord>` is the one field omitted when None (placed last so that a package
//     without it is byte-identical to a pre-task_record package); its own fields are skip-if-empty;
//   - strings escape `"`, `\`, and control characters (\b \t \n \f \r short, others \u00xx lowercase);
//     `/` and non-ASCII are written raw as UTF-8 — exactly what JSON.stringify does for a well-formed string.
// crux appends `handoff_id` and `expires_at` (and `key_id` for Ed25519) after `task_record`; serde ignores
// unknown fields, so a daemon accepts crux's packages and crux accepts the daemon's.
// One departure from the compact writer (SPEC §6): `session_state` is the stored state's bytes verbatim,
// whitespace and all (serde reads whitespace anywhere), and accept stores exactly what stands between its
// colon and the next comma — so put → mint → accept → get is byte-identical. A package whose state was
// minified (a daemon's, an older crux's) is stored as minified as it came.
import { CruxError, invalid } from '../../shared/errors';
import { parseAgentName } from '../../shared/ids';
import { tryParseTime, type Instant } from '../../shared/time';
import { arrayElements, JsonTextError, minifyJson, objectMembers, parseJsonText, type RawMember } from '../../shared/json-text';
import { encodeTaskRecord, type TaskRecord } from './task-record';

const PACKAGE_FIELDS = [
  'session_id',
  'session_state',
  'facts',
  'created_at',
  'source_agent',
  'target_agent',
  'message',
  'work_ids',
  'task_record',
  'handoff_id',
  'expires_at',
  'key_id',
] as const;

/** What crux mints. `session_state` and each fact are raw JSON text, spliced in without re-encoding. */
export interface PackageDraft {
  readonly session_id: string;
  readonly session_state: string | null;
  readonly facts: readonly string[];
  readonly created_at: string;
  readonly source_agent: string;
  readonly target_agent: string | null;
  readonly message: string | null;
  readonly work_ids: readonly string[];
  readonly task_record?: TaskRecord | undefined;
  readonly handoff_id?: string | undefined;
  readonly expires_at?: string | undefined;
  readonly key_id?: string | undefined;
}

const str = (v: string | null): string => (v === null ? 'null' : JSON.stringify(v));

function packaged(text: string, what: string, copy: (text: string) => string): string {
  try {
    return copy(text);
  } catch (error) {
    if (error instanceof JsonTextError) throw invalid(`${what} cannot be packaged: ${error.message}`);
    throw error;
  }
}

/** The stored state's bytes as they are: only checked to be JSON (a stored state always is). */
function verbatim(text: string): string {
  parseJsonText(text);
  return text;
}

/** The payload text: the state verbatim, each fact minified (insignificant whitespace only, tokens verbatim). */
export function encodePackage(p: PackageDraft): string {
  const parts = [
    `"session_id":${JSON.stringify(p.session_id)}`,
    `"session_state":${p.session_state === null ? 'null' : packaged(p.session_state, 'the session state', verbatim)}`,
    `"facts":[${p.facts.map((f) => packaged(f, 'a fact', minifyJson)).join(',')}]`,
    `"created_at":${JSON.stringify(p.created_at)}`,
    `"source_agent":${JSON.stringify(p.source_agent)}`,
    `"target_agent":${str(p.target_agent)}`,
    `"message":${str(p.message)}`,
    `"work_ids":${JSON.stringify(p.work_ids)}`,
  ];
  if (p.task_record !== undefined) parts.push(`"task_record":${encodeTaskRecord(p.task_record)}`);
  if (p.handoff_id !== undefined) parts.push(`"handoff_id":${JSON.stringify(p.handoff_id)}`);
  if (p.expires_at !== undefined) parts.push(`"expires_at":${JSON.stringify(p.expires_at)}`);
  if (p.key_id !== undefined) parts.push(`"key_id":${JSON.stringify(p.key_id)}`);
  return `{${parts.join(',')}}`;
}

/** A fact as a package carries it: its raw JSON (kept verbatim on accept) and the fields crux reads. */
export interface PackageFact {
  readonly raw: string;
  readonly fact_id: string | null;
  readonly entity: string | null;
  readonly private: boolean;
}

/** A decoded package: every field, plus the raw text of the state and the facts. */
export interface DecodedPackage {
  readonly session_id: string;
  /** The state's JSON text as it stands in the payload, whitespace around it included; null when it carries none. */
  readonly session_state: string | null;
  readonly facts: readonly PackageFact[];
  readonly created_at: string;
  readonly created: Instant;
  readonly source_agent: string;
  readonly target_agent: string | null;
  readonly message: string | null;
  readonly work_ids: readonly string[];
  readonly task_record: unknown;
  readonly handoff_id: string | null;
  readonly expires_at: string | null;
  readonly expires: Instant | null;
  readonly key_id: string | null;
  /** Members crux does not know, kept for inspect (serde ignores them too). */
  readonly other: Readonly<Record<string, unknown>>;
}

const bad = (message: string) => invalid(`the package payload ${message}`, 'the package is damaged or was not made by crux or a Crux daemon');

function stringField(members: Map<string, unknown>, key: string, required: boolean): string | null {
  const v = members.get(key);
  if (v === undefined || v === null) {
    if (required) throw bad(`has no ${key}`);
    return null;
  }
  if (typeof v !== 'string') throw bad(`has a ${key} that is not a string`);
  return v;
}

/** An agent field: what `--agent` would accept (SPEC §6), or the package is malformed (exit 5). */
function agentField(members: Map<string, unknown>, key: string, required: boolean): string | null {
  const name = stringField(members, key, required);
  if (name === null) return null;
  try {
    return parseAgentName(name);
  } catch (error) {
    if (error instanceof CruxError) throw bad(`has a ${key} that is not an agent name (${error.message})`);
    throw error;
  }
}

function timeField(members: Map<string, unknown>, key: string, required: boolean): { text: string | null; at: Instant | null } {
  const text = stringField(members, key, required);
  if (text === null) return { text, at: null };
  const at = tryParseTime(text);
  if (at === undefined) throw bad(`has a ${key} that is not an RFC 3339 time: ${JSON.stringify(text.slice(0, 60))}`);
  return { text, at };
}

function decodeFact(raw: string): PackageFact {
  const v = JSON.parse(raw) as unknown;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad('has a fact that is not an object');
  const f = v as Record<string, unknown>;
  const id = typeof f.fact_id === 'string' ? f.fact_id : typeof f.id === 'string' ? f.id : null;
  return { raw, fact_id: id, entity: typeof f.entity === 'string' ? f.entity : null, private: f.private === true };
}

/** Decodes the payload bytes (exit 5 when they are not a package). Never re-serializes anything. */
export function decodePackage(payload: Uint8Array): DecodedPackage {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload);
  } catch {
    throw bad('is not UTF-8 text');
  }
  let list: RawMember[];
  try {
    list = objectMembers(text);
  } catch (error) {
    if (error instanceof JsonTextError) throw bad(`is not a JSON object: ${error.message}`);
    throw error;
  }
  // serde refuses a repeated field of the package struct; inside session_state (a Value) repeats are data.
  const seen = new Set<string>();
  for (const { key } of list) {
    if (seen.has(key)) throw bad(`has the field ${JSON.stringify(key)} twice`);
    seen.add(key);
  }
  const raws = new Map(list.map((m) => [m.key, m.raw]));
  const state = list.find((m) => m.key === 'session_state');
  const members = new Map(list.map((m) => [m.key, JSON.parse(m.raw) as unknown]));
  const session_id = stringField(members, 'session_id', true)!;
  const factsRaw = raws.get('facts');
  if (factsRaw === undefined) throw bad('has no facts');
  if (!Array.isArray(members.get('facts'))) throw bad('has facts that are not a list');
  const facts = arrayElements(factsRaw).map(decodeFact);
  const created = timeField(members, 'created_at', true);
  const workIds = members.get('work_ids') ?? [];
  if (!Array.isArray(workIds) || !workIds.every((w) => typeof w === 'string')) throw bad('has work_ids that are not a list of strings');
  const taskRecord = members.get('task_record') ?? null;
  if (taskRecord !== null && (typeof taskRecord !== 'object' || Array.isArray(taskRecord))) throw bad('has a task_record that is not an object');
  const expires = timeField(members, 'expires_at', false);
  const other: Record<string, unknown> = {};
  for (const [k, v] of members) if (!(PACKAGE_FIELDS as readonly string[]).includes(k)) other[k] = v;
  return {
    session_id,
    session_state: state === undefined || state.padded === 'null' ? null : state.padded,
    facts,
    created_at: created.text!,
    created: created.at!,
    source_agent: agentField(members, 'source_agent', true)!,
    target_agent: agentField(members, 'target_agent', false),
    message: stringField(members, 'message', false),
    work_ids: workIds as string[],
    task_record: taskRecord,
    handoff_id: stringField(members, 'handoff_id', false),
    expires_at: expires.text,
    expires: expires.at,
    key_id: stringField(members, 'key_id', false),
    other,
  };
}
