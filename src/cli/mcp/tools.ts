// The tools of `crux mcp` (SPEC §10.1): each parses its arguments, runs the same operation as its CLI command
// and answers with that command's --json document as structuredContent and its human output as text.
import type { z as Zod } from 'zod';
import type { Context } from '../context';
import { parsePositiveDuration } from '../parse';
import { durationOr } from '../operations/scope';
import * as caseOps from '../operations/case';
import * as handoffOps from '../operations/handoff';
import { checkJournals } from '../operations/journal';
import * as sessionOps from '../operations/session';
import { textOf, type Renderer } from '../../output/emit';
import { renderCheck } from '../../output/journal';
import { renderAccepted } from '../../output/handoff';
import { renderRecorded, renderRetrieved } from '../../output/case';
import { renderClose, renderListing, renderSession } from '../../output/session';
import { loadStyle } from '../../output/style';
import { invalid, usage } from '../../shared/errors';
import { newId, parseAgentName, parseLogicalSessionId, type AgentName, type HandoffId } from '../../shared/ids';
import { parseTime } from '../../shared/time';
import { parseRecordObject } from '../../domain/case/case';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../domain/case/rank';
import { ED25519_ALG, MAC_ALG } from '../../domain/handoff/crypto';
import { MAX_ENVELOPE_BYTES } from '../../domain/handoff/envelope';
import { DEFAULT_MAX_AGE_MS, DEFAULT_TTL_MS } from '../../domain/handoff/store';
import { parseTaskRecord } from '../../domain/handoff/task-record';
import { parseHistoryPoint } from '../../domain/session/history';
import { acceptStateDocument } from '../../domain/session/state-document';

type Z = typeof Zod;
type JsonSchema = Record<string, unknown>;

export interface ToolAnswer {
  readonly structured: Record<string, unknown>;
  readonly text: string;
}

/** Arguments that a schema cannot refuse alone (two that exclude each other): a protocol error, not a refusal. */
export class ArgumentError extends Error {}

export interface Tool<S extends Zod.ZodRawShape = Zod.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly readOnly: boolean;
  /** It may replace or end what is stored (MCP's destructiveHint). */
  readonly destructive: boolean;
  /** A second identical call changes nothing more (MCP's idempotentHint). */
  readonly idempotent: boolean;
  readonly input: (z: Z) => S;
  /** The top-level members of the structuredContent on success (a refusal carries `error` instead). */
  readonly output: Record<string, JsonSchema>;
  readonly run: (ctx: Context, args: Zod.infer<Zod.ZodObject<S>>) => Promise<ToolAnswer>;
}

const tool = <S extends Zod.ZodRawShape>(spec: Tool<S>): Tool<S> => spec;

/** The CLI's human output of a result (without colour): the text beside the structured document. */
async function human<T>(render: Renderer<T>, result: T): Promise<string> {
  return textOf(render(result, await loadStyle({ color: false })));
}

function requireAgent(ctx: Context, tool: string): AgentName {
  if (ctx.agent !== undefined) return ctx.agent;
  throw usage(`${tool} needs this server's agent identity`, 'start the server as `crux mcp --agent <name>` (or set CRUX_AGENT)');
}

const sessionId = (z: Z) => z.string().describe("The session's id in this agent's scope (1-256 characters, no '::', no control characters).");
const duration = (z: Z, what: string) => z.string().describe(`${what}, as a duration: 90s, 15m, 2h, 7d.`);
const count = (z: Z, what: string) => z.number().int().min(0).describe(what);

const OBJECT: JsonSchema = { type: 'object' };
const SESSION = { session: OBJECT };

const sessionPut = tool({
  name: 'session_put',
  title: 'Store a session state',
  description:
    "Create or replace the state of a session (what this agent is doing), like `crux session put`. Give the state as `state` (any JSON value) or as `state_text` (JSON text kept byte-for-byte: exact numbers such as 12345678901234567890 or 1.0, key order). Answers with the session's record.",
  readOnly: false,
  destructive: true,
  idempotent: true,
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
  run: async (ctx, args) => {
    const hasState = Object.hasOwn(args, 'state') && args.state !== undefined;
    if (hasState === (args.state_text !== undefined)) throw new ArgumentError('give exactly one of state (a JSON value) and state_text (JSON text)');
    if (args.ttl !== undefined && args.expires_at !== undefined) throw new ArgumentError('give ttl or expires_at, not both');
    const id = parseLogicalSessionId(args.session_id);
    const max = sessionOps.maxStateBytes(ctx);
    const text = hasState ? JSON.stringify(args.state) : args.state_text!;
    const document = await sessionOps.putSession(ctx, id, {
      state: acceptStateDocument(Buffer.from(text), max),
      tokens: args.tokens,
      addTokens: args.add_tokens,
      maxTokens: sessionOps.tokenBudget(ctx, args.max_tokens),
      ttlMs: args.ttl === undefined ? undefined : parsePositiveDuration(args.ttl, 'ttl'),
      expiresAt: args.expires_at === undefined ? undefined : parseTime(args.expires_at, 'expires_at'),
    });
    return { structured: document, text: await human(renderSession('stored'), document) };
  },
});

const sessionGet = tool({
  name: 'session_get',
  title: 'Read a session',
  description:
    "The state of a session, like `crux session get` (with `at`: as it was then, like `--at`): the text is the stored state's exact bytes; structuredContent is the session's record with the state parsed in.",
  readOnly: true,
  destructive: false,
  idempotent: true,
  input: (z) => ({
    session_id: sessionId(z),
    at: z
      .union([z.number().int().min(1), z.string()])
      .optional()
      .describe('The session as it was at that journal record (a sequence number, as `crux session history` lists them) or RFC 3339 time.'),
  }),
  output: SESSION,
  run: async (ctx, args) => {
    const at = args.at === undefined ? undefined : parseHistoryPoint(String(args.at));
    const { state, documentText } = await sessionOps.getSession(ctx, parseLogicalSessionId(args.session_id), at);
    return { structured: JSON.parse(documentText), text: state };
  },
});

const sessionList = tool({
  name: 'session_list',
  title: 'List sessions',
  description:
    "This agent's sessions, newest first, like `crux session list`: active and handed-off ones; archived and closed ones only with all (or archived).",
  readOnly: true,
  destructive: false,
  idempotent: true,
  input: (z) => ({
    all: z.boolean().optional().describe('Every session, archived and closed included.'),
    archived: z.boolean().optional().describe('Only archived sessions.'),
    stranded: z.boolean().optional().describe('Only sessions not closed whose freshness is stale (no sign of life for 24 h).'),
    limit: count(z, 'At most this many sessions.').optional(),
  }),
  output: { sessions: { type: 'array', items: OBJECT } },
  run: async (ctx, args) => {
    const filter = { all: args.all === true, archived: args.archived === true, stranded: args.stranded === true, allAgents: false };
    const document = await sessionOps.listSessions(ctx, filter, { limit: args.limit });
    return { structured: document, text: await human(renderListing, document) };
  },
});

const sessionArchive = tool({
  name: 'session_archive',
  title: 'Archive a session',
  description: 'Hide a session from the default listing, kept in full, like `crux session archive` (undo with session_unarchive).',
  readOnly: false,
  destructive: false,
  idempotent: false,
  input: (z) => ({ session_id: sessionId(z), reason: z.string().optional().describe('Why (credentials in URLs are removed).') }),
  output: SESSION,
  run: async (ctx, args) => {
    const document = await sessionOps.archiveSession(ctx, parseLogicalSessionId(args.session_id), args.reason);
    return { structured: document, text: await human(renderSession('archived'), document) };
  },
});

const sessionUnarchive = tool({
  name: 'session_unarchive',
  title: 'Unarchive a session',
  description: 'Make an archived session active again, like `crux session unarchive`.',
  readOnly: false,
  destructive: false,
  idempotent: false,
  input: (z) => ({ session_id: sessionId(z) }),
  output: SESSION,
  run: async (ctx, args) => {
    const document = await sessionOps.unarchiveSession(ctx, parseLogicalSessionId(args.session_id));
    return { structured: document, text: await human(renderSession('unarchived'), document) };
  },
});

const sessionClose = tool({
  name: 'session_close',
  title: 'Close a session',
  description:
    'Close a session exactly once, like `crux session close`: outcome "closed", or "already_closed" with the original close record when it was closed before (not an error).',
  readOnly: false,
  destructive: true,
  idempotent: true,
  input: (z) => ({
    session_id: sessionId(z),
    outcome: z.enum(sessionOps.CLOSE_OUTCOMES).optional().describe('How it ended (default completed).'),
    summary: z.string().optional().describe('A closing note (credentials in URLs are removed).'),
  }),
  output: { outcome: { type: 'string', enum: ['closed', 'already_closed'] }, session: OBJECT },
  run: async (ctx, args) => {
    const result = await sessionOps.closeSession(ctx, parseLogicalSessionId(args.session_id), { outcome: args.outcome ?? 'completed', summary: args.summary });
    return { structured: { ...result }, text: await human(renderClose, result) };
  },
});

const caseRecord = tool({
  name: 'case_record',
  title: 'Record a case',
  description:
    'Remember what was done and how it turned out (procedural memory), like `crux case record`; case_retrieve finds it again by its task and tags. Credentials in URLs are removed from every text.',
  readOnly: false,
  destructive: false,
  idempotent: false,
  input: (z) => ({
    task: z.string().describe('What was to be done: the retrieval key.'),
    action: z.string().describe('What was done.'),
    outcome: z.string().describe('How it turned out.'),
    context: z.string().optional().describe('The circumstances.'),
    success: z.boolean().optional().describe('Whether it worked (default true).'),
    reward: z.number().optional().describe('How well it worked, 0 to 1 (default 1; clamped).'),
    tags: z.array(z.string()).optional().describe('Tags, matched by case_retrieve like words of the task.'),
    source_receipt: z.string().optional().describe('A receipt of the source, e.g. the run or commit.'),
  }),
  output: { case: OBJECT },
  run: async (ctx, args) => {
    // The same parse as `crux case record --stdin`, which takes these fields as one JSON object.
    const document = await caseOps.recordCase(ctx, parseRecordObject(args));
    return { structured: document, text: `recorded case ${await human(renderRecorded, document)}` };
  },
});

const caseRetrieve = tool({
  name: 'case_retrieve',
  title: 'Retrieve similar cases',
  description:
    'The recorded cases whose task and tags share the most words with a query (Jaccard similarity), best first, like `crux case retrieve`.',
  readOnly: false,
  destructive: false,
  idempotent: false,
  input: (z) => ({
    task: z.string().describe('The query: a task description.'),
    top_k: count(z, `At most this many results (default ${DEFAULT_TOP_K}, at most 100).`).optional(),
    only_success: z.boolean().optional().describe('Leave out failed cases.'),
    min_similarity: z.number().optional().describe('Leave out matches below this similarity, 0 to 1.'),
    mark_reused: z.boolean().optional().describe('Count each returned case as reused (journaled).'),
  }),
  output: { results: { type: 'array', items: OBJECT } },
  run: async (ctx, args) => {
    const query = {
      text: args.task,
      topK: args.top_k === undefined ? DEFAULT_TOP_K : parseTopK(String(args.top_k)),
      onlySuccess: args.only_success === true,
      minSimilarity: args.min_similarity === undefined ? 0 : parseMinSimilarity(String(args.min_similarity)),
    };
    const document = await caseOps.retrieve(ctx, query, args.mark_reused === true);
    return { structured: document, text: await human(renderRetrieved, document) };
  },
});

const createHandoff = tool({
  name: 'create_handoff',
  title: 'Hand a session off',
  description:
    "Package one of this agent's sessions for another agent, like `crux handoff mint`: the text is the package envelope as a JSON string (give it to the receiver, who passes it to accept_handoff); the session becomes handed_off.",
  readOnly: false,
  destructive: false,
  idempotent: false,
  input: (z) => ({
    session_id: sessionId(z),
    target_agent: z.string().optional().describe('The only agent that may accept the package.'),
    message: z.string().optional().describe('A note for the receiver (credentials in URLs are removed).'),
    include_facts: z.boolean().optional().describe('Bundle the facts the session refers to.'),
    ttl: duration(z, 'How long the package stays acceptable (default 24h)').optional(),
    task_record: z
      .object({
        requester: z.string().optional(),
        desired_outcome: z.string().optional(),
        sources: z.array(z.string()).optional(),
        acceptance_criteria: z.array(z.string()).optional(),
        boundaries: z.array(z.string()).optional(),
        blocker_rule: z.string().optional(),
      })
      .strict()
      .optional()
      .describe('The task being handed over: who asked, what done looks like, sources, acceptance criteria, boundaries, what to do when blocked.'),
    alg: z.enum([MAC_ALG, ED25519_ALG]).optional().describe(`${MAC_ALG} (the shared key, default) or ${ED25519_ALG} (this agent's own key).`),
  }),
  output: { payload_b64: { type: 'string' }, content_hash: { type: 'string' }, signature_b64: { type: 'string' }, signature_alg: { type: 'string' } },
  run: async (ctx, args) => {
    const result = await handoffOps.mint(ctx, {
      sessionId: parseLogicalSessionId(args.session_id),
      from: requireAgent(ctx, 'create_handoff'),
      to: args.target_agent === undefined ? null : parseAgentName(args.target_agent),
      message: args.message ?? null,
      ttlMs: durationOr(args.ttl, DEFAULT_TTL_MS, 'ttl'),
      includeFacts: args.include_facts === true,
      taskRecord: args.task_record === undefined ? undefined : parseTaskRecord(args.task_record, 'task_record'),
      alg: args.alg ?? MAC_ALG,
      handoffId: newId<HandoffId>('h'),
    });
    return { structured: { ...result.envelope }, text: result.text };
  },
});

const acceptHandoff = tool({
  name: 'accept_handoff',
  title: 'Accept a handed-off session',
  description:
    "Verify a package from create_handoff (or `crux handoff mint`, or a Crux daemon) and store its session under this agent's scope, like `crux handoff accept`. Each package is accepted once; a replay is refused (code 8).",
  readOnly: false,
  destructive: true,
  idempotent: false,
  input: (z) => ({
    handoff: z
      .union([z.string(), z.object({ payload_b64: z.string(), content_hash: z.string(), signature_b64: z.string(), signature_alg: z.string() }).passthrough()])
      .describe('The package envelope: the JSON string create_handoff returned, or that object.'),
    max_age: duration(z, 'How old a package without expires_at (a daemon package) may be (default 24h)').optional(),
  }),
  output: { accepted: OBJECT },
  run: async (ctx, args) => {
    const text = typeof args.handoff === 'string' ? args.handoff : JSON.stringify(args.handoff);
    const bytes = Buffer.from(text);
    if (bytes.length > MAX_ENVELOPE_BYTES) throw invalid(`the package is over the limit of ${MAX_ENVELOPE_BYTES} bytes`);
    const receiver = requireAgent(ctx, 'accept_handoff');
    const maxAgeMs = durationOr(args.max_age, DEFAULT_MAX_AGE_MS, 'max_age');
    const { document, result } = await handoffOps.accept(ctx, bytes, { receiver, maxAgeMs });
    return { structured: document, text: await human(() => renderAccepted(result), document) };
  },
});

const journalCheck = tool({
  name: 'journal_check',
  title: 'Check the journals',
  description: 'Verify every record, the hash chain and the sequence of each journal, like `crux journal check` (healthy false when one is damaged).',
  readOnly: true,
  destructive: false,
  idempotent: true,
  input: () => ({}),
  output: { healthy: { type: 'boolean' }, journals: { type: 'array', items: OBJECT } },
  run: async (ctx) => {
    const document = await checkJournals(ctx, { repair: false });
    return { structured: document, text: await human(renderCheck, document) };
  },
});

export const TOOLS: readonly Tool<any>[] = [
  sessionPut,
  sessionGet,
  sessionList,
  sessionArchive,
  sessionUnarchive,
  sessionClose,
  caseRecord,
  caseRetrieve,
  createHandoff,
  acceptHandoff,
  journalCheck,
];
