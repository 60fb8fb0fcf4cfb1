// The session tools of `crux mcp` (SPEC §10.1): put, get, history, list, archive, unarchive, close — each the
// operation of its CLI command, its --json document as structuredContent.
import { parsePositiveDuration } from '../parse';
import * as sessionOps from '../operations/session';
import { renderClose, renderHistory, renderListing, renderSession } from '../../output/session';
import { parseLogicalSessionId } from '../../shared/ids';
import { parseTime } from '../../shared/time';
import { parseHistoryPoint } from '../../domain/session/history';
import { acceptStateDocument } from '../../domain/session/state-document';
import { ArgumentError, count, duration, human, limit, limitOf, OBJECT, READS, REPLACES, SESSION, sessionId, sessionKey, tool, WRITES } from './tool';

export const sessionPut = tool({
  name: 'session_put',
  title: 'Store a session state',
  description:
    "Create or replace the state of a session (what this agent is doing), like `crux session put`. Give the state as `state` (any JSON value) or as `state_text` (JSON text kept byte-for-byte: exact numbers such as 12345678901234567890 or 1.0, key order, whitespace). Answers with the session's record.",
  ...REPLACES,
  input: (z) => ({
    session_id: sessionId(z),
    state: z.unknown().optional().describe('The new state: any JSON value. Use state_text instead to keep numbers and key order exactly.'),
    state_text: z.string().optional().describe('The new state as JSON text, stored and returned byte-for-byte.'),
    ttl: duration(z, 'Expire the session after this long').optional(),
    expires_at: z.string().optional().describe('Expire the session at this RFC 3339 time (instead of ttl).'),
    tokens: count(z, 'Set total_tokens to this count.').optional(),
    add_tokens: count(z, 'Add this many tokens to total_tokens.').optional(),
    max_tokens: count(z, 'Refuse a total_tokens above this ceiling (default CRUX_SESSION_TOKEN_BUDGET).').optional(),
  }),
  output: SESSION,
  touches: (args) => sessionKey(args.session_id),
  run: async (ctx, args) => {
    const hasState = Object.hasOwn(args, 'state') && args.state !== undefined;
    if (hasState === (args.state_text !== undefined)) throw new ArgumentError('give exactly one of state (a JSON value) and state_text (JSON text)');
    if (args.ttl !== undefined && args.expires_at !== undefined) throw new ArgumentError('give ttl or expires_at, not both');
    const id = parseLogicalSessionId(args.session_id);
    const max = sessionOps.maxStateBytes(ctx);
    const text = hasState ? JSON.stringify(args.state) : args.state_text!;
    return sessionOps.putSession(ctx, id, {
      state: acceptStateDocument(Buffer.from(text), max),
      tokens: args.tokens,
      addTokens: args.add_tokens,
      maxTokens: sessionOps.tokenBudget(ctx, args.max_tokens),
      ttlMs: args.ttl === undefined ? undefined : parsePositiveDuration(args.ttl, 'ttl'),
      expiresAt: args.expires_at === undefined ? undefined : parseTime(args.expires_at, 'expires_at'),
    });
  },
  text: human(renderSession('stored')),
});

export const sessionGet = tool({
  name: 'session_get',
  title: 'Read a session',
  description:
    "The state of a session, like `crux session get` (with `at`: as it was then, like `--at`; session_history lists the seq of every version): the text is the stored state's exact bytes; structuredContent is the session's record with the state parsed in (`state`) and as its exact text (`state_text`).",
  ...READS,
  input: (z) => ({
    session_id: sessionId(z),
    at: z
      .union([z.number().int().min(1), z.string()])
      .optional()
      .describe('The session as it was at that journal record (a seq, as session_history lists them) or RFC 3339 time.'),
  }),
  output: SESSION,
  exactText: true,
  touches: (args) => sessionKey(args.session_id),
  run: (ctx, args) =>
    sessionOps.getSession(ctx, parseLogicalSessionId(args.session_id), args.at === undefined ? undefined : parseHistoryPoint(String(args.at), 'at')),
  document: ({ state, documentText }) => {
    // Parsed, `state` loses what JSON numbers cannot carry (12345678901234567890, 1e400): state_text keeps the bytes.
    const document = JSON.parse(documentText) as { session: Record<string, unknown> };
    document.session.state_text = state;
    return document;
  },
  text: ({ state }) => state,
});

export const sessionHistory = tool({
  name: 'session_history',
  title: 'List the versions of a session',
  description:
    'Every recorded version of a session, newest first, like `crux session history`: seq, time, event, actor, status and state size of each. Pass a seq to session_get as `at` to read the state as it was then.',
  ...READS,
  input: (z) => ({ session_id: sessionId(z), limit: limit(z, 'versions, the newest') }),
  output: { history: { type: 'array', items: OBJECT } },
  touches: (args) => sessionKey(args.session_id),
  run: (ctx, args) => sessionOps.historyOf(ctx, parseLogicalSessionId(args.session_id), limitOf(args.limit)),
  text: async (document, args) => {
    const n = document.history.length;
    const head = `${n} version${n === 1 ? '' : 's'} of session ${args.session_id}, newest first; session_get with at: <seq> reads one:`;
    return `${head}\n${await human(renderHistory)(document)}`;
  },
});

export const sessionList = tool({
  name: 'session_list',
  title: 'List sessions',
  description:
    "This agent's sessions, newest first, like `crux session list`: active and handed-off ones; archived and closed ones only with all (or archived).",
  ...READS,
  input: (z) => ({
    all: z.boolean().optional().describe('Every session, archived and closed included.'),
    archived: z.boolean().optional().describe('Only archived sessions.'),
    stranded: z.boolean().optional().describe('Only stranded sessions: neither closed nor archived, and stale (no sign of life for 24 h).'),
    limit: limit(z, 'sessions'),
  }),
  output: { sessions: { type: 'array', items: OBJECT } },
  toolTerms: true,
  touches: () => 'everything',
  run: (ctx, args) =>
    sessionOps.listSessions(
      ctx,
      { all: args.all === true, archived: args.archived === true, stranded: args.stranded === true, allAgents: false },
      { limit: limitOf(args.limit) },
    ),
  text: human(renderListing),
});

export const sessionArchive = tool({
  name: 'session_archive',
  title: 'Archive a session',
  description: 'Hide a session from the default listing, kept in full, like `crux session archive` (undo with session_unarchive).',
  ...WRITES,
  input: (z) => ({ session_id: sessionId(z), reason: z.string().optional().describe('Why (credentials in URLs are removed).') }),
  output: SESSION,
  touches: (args) => sessionKey(args.session_id),
  run: (ctx, args) => sessionOps.archiveSession(ctx, parseLogicalSessionId(args.session_id), args.reason),
  text: human(renderSession('archived')),
});

export const sessionUnarchive = tool({
  name: 'session_unarchive',
  title: 'Unarchive a session',
  description: 'Make an archived session active again, like `crux session unarchive`.',
  ...WRITES,
  input: (z) => ({ session_id: sessionId(z) }),
  output: SESSION,
  touches: (args) => sessionKey(args.session_id),
  run: (ctx, args) => sessionOps.unarchiveSession(ctx, parseLogicalSessionId(args.session_id)),
  text: human(renderSession('unarchived')),
});

export const sessionClose = tool({
  name: 'session_close',
  title: 'Close a session',
  description:
    'Close a session exactly once, like `crux session close`: outcome "closed", or "already_closed" with the original close record when it was closed before (not an error).',
  ...REPLACES,
  input: (z) => ({
    session_id: sessionId(z),
    outcome: z.enum(sessionOps.CLOSE_OUTCOMES).optional().describe('How it ended (default completed).'),
    summary: z.string().optional().describe('A closing note (credentials in URLs are removed).'),
  }),
  output: { outcome: { type: 'string', enum: ['closed', 'already_closed'] }, session: OBJECT },
  touches: (args) => sessionKey(args.session_id),
  run: (ctx, args) => sessionOps.closeSession(ctx, parseLogicalSessionId(args.session_id), { outcome: args.outcome ?? 'completed', summary: args.summary }),
  text: human(renderClose),
});
