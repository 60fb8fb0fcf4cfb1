// Export and import lines: one S-shaped JSON object per line with the state spliced in as raw JSON text.
//
// A state whose text is not one trimmed line (a pretty-printed document, a trailing newline) cannot sit
// raw in a JSON Lines file byte-for-byte; such a line also carries `state_text`, the exact text as a JSON
// string, and `state` holds the same document with its line breaks turned into spaces. Import prefers
// `state_text`, so export → import → export reproduces every byte.
import { invalid } from '../../shared/errors';
import { parseActorName, parseAgentName, parseLogicalSessionId, scopeSessionId, type AgentName } from '../../shared/ids';
import { parseJsonLines, parseJsonText, refuseRepeatedIds } from '../../shared/json-lines';
import { keptText } from '../../shared/free-text';
import { objectMembers } from '../../shared/json-text';
import { formatTime, parseTime, type Instant } from '../../shared/time';
import type { ImportEntry } from './decide';
import { CLOSE_OUTCOMES, type CloseOutcome, type ImportedData } from './events';
import { SESSION_STATES, type SessionStatus } from './machine';
import { acceptStateDocument } from './state-document';
import type { SessionView } from './view';

const isLineSafe = (text: string) => !/[\r\n]/.test(text) && text.trim() === text;

/** An object's JSON text with `state` (raw) appended as its last member(s). */
export function spliceState(objectJson: string, state: string): string {
  const head = objectJson.slice(0, -1);
  const sep = head.endsWith('{') ? '' : ',';
  if (isLineSafe(state)) return `${head}${sep}"state":${state}}`;
  return `${head}${sep}"state":${state.replace(/[\r\n]/g, ' ').trim()},"state_text":${JSON.stringify(state)}}`;
}

export const formatExportLine = (view: SessionView, state: string): string => `${spliceState(JSON.stringify(view), state)}\n`;

export interface ImportOptions {
  /** The caller's agent: the scope of lines without an `agent` member. */
  readonly agent: AgentName | undefined;
  readonly maxStateBytes: number;
  readonly now: Instant;
  /** Called after each line with the bytes read so far and the total (a progress display). */
  readonly onLine?: ((doneBytes: number, totalBytes: number) => void) | undefined;
}

/** Every line validated before anything is written; the first bad one refuses the import, by its line number. */
export function parseImportLines(input: Buffer, opts: ImportOptions): ImportEntry[] {
  const lines = parseJsonLines(input, (text) => parseImportLine(text, opts), {
    hint: 'one session object per line, with session_id and state',
    onLine: opts.onLine,
  });
  refuseRepeatedIds(
    lines,
    (data) => data.id,
    (id) => `the session ${JSON.stringify(id)}`,
  );
  return lines.map(({ line, value }) => ({ line, data: value }));
}

function parseImportLine(text: string, opts: ImportOptions): ImportedData {
  const value = parseJsonText(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('not a JSON object');
  const o = value as Record<string, unknown>;
  if (typeof o.session_id !== 'string') throw invalid('session_id is required (a string)');
  const id = parseLogicalSessionId(o.session_id);
  const agent = !('agent' in o)
    ? opts.agent
    : o.agent === null
      ? undefined
      : typeof o.agent === 'string'
        ? parseAgentName(o.agent)
        : fail('agent must be a string or null');
  const state = importedState(text, o, opts.maxStateBytes);

  const status: SessionStatus =
    o.status === undefined || o.status === null
      ? o.archived === true
        ? 'archived'
        : 'active'
      : SESSION_STATES.includes(o.status as SessionStatus)
        ? (o.status as SessionStatus)
        : fail(`status must be one of ${SESSION_STATES.join(', ')}`);
  const updatedAt = time(o, 'updated_at') ?? formatTime(opts.now);
  const archived = status === 'archived';
  const closed = status === 'closed';
  return {
    id: scopeSessionId(agent, id),
    state,
    status,
    created_at: time(o, 'created_at') ?? updatedAt,
    updated_at: updatedAt,
    total_tokens: tokens(o.total_tokens),
    expires_at: time(o, 'expires_at'),
    archived_at: archived ? (time(o, 'archived_at') ?? updatedAt) : null,
    archive_reason: archived ? text_(o, 'archive_reason') : null,
    actor: o.actor === undefined || o.actor === null ? null : typeof o.actor === 'string' ? parseActorName(o.actor) : fail('actor must be a string or null'),
    closed_at: closed ? (time(o, 'closed_at') ?? updatedAt) : null,
    outcome: closed ? outcome(o.outcome) : null,
    summary: closed ? text_(o, 'summary') : null,
    handoff_id:
      o.handoff_id === undefined || o.handoff_id === null
        ? null
        : typeof o.handoff_id === 'string'
          ? o.handoff_id
          : fail('handoff_id must be a string or null'),
  };
}

function fail(message: string): never {
  throw invalid(message);
}

function importedState(text: string, o: Record<string, unknown>, maxBytes: number): string {
  if (o.state_text !== undefined) {
    if (typeof o.state_text !== 'string') fail('state_text must be a string (the exact state document)');
    return acceptStateDocument(Buffer.from(o.state_text), maxBytes);
  }
  if (!('state' in o)) fail('state is required');
  // JSON.parse keeps the last of repeated keys; so does the state taken from the line.
  const state = objectMembers(text).findLast((m) => m.key === 'state')!;
  return acceptStateDocument(Buffer.from(state.raw), maxBytes);
}

function time(o: Record<string, unknown>, field: string): string | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') fail(`${field} must be an RFC 3339 time or null`);
  return formatTime(parseTime(v, field));
}

function text_(o: Record<string, unknown>, field: string): string | null {
  const v = o[field];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') fail(`${field} must be a string or null`);
  return keptText(v);
}

function tokens(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (!Number.isSafeInteger(v) || (v as number) < 0) fail(`total_tokens must be a whole number ≥ 0: ${JSON.stringify(v)}`);
  return v as number;
}

function outcome(v: unknown): CloseOutcome {
  if (v === undefined || v === null) return 'completed';
  if (!CLOSE_OUTCOMES.includes(v as CloseOutcome)) fail(`outcome must be one of ${CLOSE_OUTCOMES.join(', ')}`);
  return v as CloseOutcome;
}
