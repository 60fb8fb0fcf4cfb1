// The dashboard's JSON twin (SPEC §12): each path answers with the CLI's `--json` document for the same question,
// from the same operation, with the same option parsing; query parameters are the options in snake_case.
import { contextOf, type Context } from '../context';
import { parseChoices, parseCount, parseLimit, parseSort } from '../parse';
import { getSession, historyOf } from '../operations/session';
import { countedCases, listCases, retrieve, showCase } from '../operations/case';
import { HANDOFF_STATUSES, listHandoffs } from '../operations/handoff';
import { checkJournals } from '../operations/journal';
import { withWarnings } from '../../output/emit';
import { inspectJson } from '../../output/handoff';
import { handoffScope } from '../operations/scope';
import { exportHandoff } from '../../domain/handoff/listing';
import { encodeEnvelope } from '../../domain/handoff/envelope';
import { DEFAULT_MAX_AGE_MS, inspectHandoff } from '../../domain/handoff/store';
import { CruxError, errorDocument, internalError, invalid, notFound } from '../../shared/errors';
import { parseAgentName, parseCaseId, parseLogicalSessionId } from '../../shared/ids';
import { CASE_ORDERS, HANDOFF_ORDERS } from '../../domain/list-window';
import { DEFAULT_TOP_K, parseMinSimilarity, parseTopK } from '../../domain/case/rank';
import { parseHistoryPoint } from '../../domain/session/history';
import { activity, journalSizes, sessionCounts, successByTag } from './overview';
import { flag, many, sessionsDocument, text } from './api-sessions';
import type { ApiScope } from './api-scope';

export interface Answer {
  readonly status: number;
  /** A JSON document (one line, no newline). */
  readonly body: string;
}

const HTTP_STATUS: Partial<Record<CruxError['kind'], number>> = {
  usage: 400,
  invalid_input: 400,
  not_found: 404,
  conflict: 409,
  permission_denied: 500,
  // An encrypted store and a server started without its key (CRUX_KEY_FILE): what needs plaintext is refused.
  key_required: 403,
  lock_timeout: 503,
  store_unavailable: 503,
  io_error: 503,
  disk_full: 503,
};

/** The context of one request: the clock read anew, the store as it is now, and the agent a path names. */
function contextFor(scope: ApiScope, agent?: string | null): Context {
  const globals = agent === undefined ? scope.globals : { ...scope.globals, agent: agent ?? undefined };
  // A request for an unscoped session ("-") must not inherit CRUX_AGENT.
  const env = agent === null ? { ...scope.env, CRUX_AGENT: '' } : scope.env;
  const ctx = contextOf(globals, env);
  made.get(scope)?.push(ctx);
  return ctx;
}

/** The contexts each request in flight made (answer's scope): a refusal carries the damage they passed over. */
const made = new WeakMap<ApiScope, Context[]>();

/** `/api/sessions`: `session list --json --all-agents` unless all_agents=0 or an agent is named (api-sessions.ts). */
async function sessions(scope: ApiScope, q: URLSearchParams): Promise<[Context, unknown]> {
  const agent = text(q, 'agent');
  const ctx = contextFor(scope, agent);
  return [ctx, await sessionsDocument(ctx, q, agent)];
}

async function cases(ctx: Context, q: URLSearchParams) {
  const onlySuccess = flag(q, 'only_success') === true;
  const onlyFailure = flag(q, 'only_failure') === true;
  if (onlySuccess && onlyFailure) throw invalid('give only_success or only_failure, not both');
  const filter = { success: onlySuccess ? true : onlyFailure ? false : undefined, tags: many(q, 'tag') };
  const sort = parseSort(text(q, 'sort'), CASE_ORDERS);
  const limit = parseLimit(text(q, 'limit'));
  const offsetRaw = text(q, 'offset');
  if (offsetRaw === undefined) return listCases(ctx, filter, { sort, limit });
  // A page (the dashboard's): the CLI's document with how many match and where the page starts.
  const offset = parseCount(offsetRaw, 'offset');
  const { document, total } = await countedCases(ctx, filter, { sort, limit: limit === undefined ? undefined : offset + limit });
  return { cases: document.cases.slice(offset), total, offset };
}

/** `/api/cases/retrieve?task=…`: `case retrieve <task> --json`, never marking a case reused (the UI writes nothing). */
function retrieval(ctx: Context, q: URLSearchParams) {
  const task = text(q, 'task');
  if (task === undefined || task.trim() === '') throw invalid('task is required: /api/cases/retrieve?task=…');
  const topK = text(q, 'top_k') ?? text(q, 'limit');
  const minSimilarity = text(q, 'min_similarity');
  const query = {
    text: task,
    topK: topK === undefined ? DEFAULT_TOP_K : parseTopK(topK, 'top_k'),
    onlySuccess: flag(q, 'only_success') === true,
    minSimilarity: minSimilarity === undefined ? 0 : parseMinSimilarity(minSimilarity, 'min_similarity'),
  };
  return retrieve(ctx, query, false);
}

function handoffs(ctx: Context, q: URLSearchParams) {
  const from = text(q, 'from');
  const to = text(q, 'to');
  const filter = {
    statuses: parseChoices<string>(many(q, 'status'), HANDOFF_STATUSES, 'status'),
    from: from === undefined ? undefined : parseAgentName(from),
    to: to === undefined ? undefined : parseAgentName(to),
  };
  const window = { sort: parseSort(text(q, 'sort'), HANDOFF_ORDERS), limit: parseLimit(text(q, 'limit')) };
  return listHandoffs(ctx, filter, window);
}

/** `/api/sessions/<agent>/<id>[/history]`: `-` names an unscoped session. */
async function session(scope: ApiScope, parts: string[], q: URLSearchParams): Promise<[Context, unknown] | [Context, unknown, string]> {
  const [agentPart, idPart, tail] = parts;
  const ctx = contextFor(scope, agentPart === '-' ? null : parseAgentName(agentPart!));
  const id = parseLogicalSessionId(idPart!);
  if (tail === 'history') return [ctx, await historyOf(ctx, id, parseLimit(text(q, 'limit')))];
  const at = text(q, 'at');
  const { documentText } = await getSession(ctx, id, at === undefined ? undefined : parseHistoryPoint(at));
  return [ctx, undefined, documentText];
}

/**
 * `/api/handoffs/<id>/inspect`: `crux handoff export <id> | crux handoff inspect --as <receiver> --json`, the
 * receiver being `as`, else the package's target agent. Failed checks are in the document (200), as inspect prints them.
 */
async function inspection(scope: ApiScope, id: string, q: URLSearchParams): Promise<[Context, unknown, string]> {
  const ctx = contextFor(scope);
  const { envelope, minted } = await exportHandoff(handoffScope(ctx), id);
  const as = text(q, 'as');
  const receiver = as === undefined ? (minted.target_agent ?? undefined) : parseAgentName(as);
  const result = await inspectHandoff(handoffScope(ctx), Buffer.from(`${encodeEnvelope(envelope)}\n`), { receiver, maxAgeMs: DEFAULT_MAX_AGE_MS });
  return [ctx, undefined, inspectJson(result)];
}

type Route = (scope: ApiScope, q: URLSearchParams, parts: string[]) => Promise<[Context, unknown] | [Context, unknown, string]>;

/** A route that needs the request's context and nothing of the path. */
const plain =
  (run: (ctx: Context, s: ApiScope, q: URLSearchParams) => Promise<unknown>): Route =>
  async (s, q) => {
    const ctx = contextFor(s);
    return [ctx, await run(ctx, s, q)];
  };

const ROUTES: Record<string, Route> = {
  sessions: (s, q) => sessions(s, q),
  cases: plain((ctx, _s, q) => cases(ctx, q)),
  'cases/retrieve': plain((ctx, _s, q) => retrieval(ctx, q)),
  handoffs: plain((ctx, _s, q) => handoffs(ctx, q)),
  'journal/check': plain((ctx) => checkJournals(ctx, { repair: false })),
  // What the overview needs besides the CLI's documents.
  'overview/sessions': plain((ctx) => sessionCounts(ctx)),
  'overview/activity': plain((ctx, s, q) => activity(ctx, s, text(q, 'days'))),
  'overview/tags': plain((ctx) => successByTag(ctx)),
  'overview/journals': plain((ctx, s) => journalSizes(ctx, s)),
};

/** Answers `/api/<path>` (path without the prefix, already split on `/` and decoded). */
export async function answer(outer: ApiScope, parts: string[], q: URLSearchParams): Promise<Answer> {
  const scope = { ...outer };
  const contexts: Context[] = [];
  made.set(scope, contexts);
  try {
    if (parts.length === 3 && parts[0] === 'handoffs' && parts[2] === 'inspect') {
      const [ctx, , documentText] = await inspection(scope, parts[1]!, q);
      return { status: 200, body: withWarnings(documentText, ctx.warnings) };
    }
    // `/api/cases/<id>`: `case show <id> --json` (the case page's twin).
    if (parts.length === 2 && parts[0] === 'cases' && parts[1] !== 'retrieve') {
      const ctx = contextFor(scope);
      return { status: 200, body: withWarnings(JSON.stringify(await showCase(ctx, parseCaseId(parts[1]!))), ctx.warnings) };
    }
    const route =
      parts.length >= 3 && parts[0] === 'sessions' && (parts.length === 3 || (parts.length === 4 && parts[3] === 'history'))
        ? (s: ApiScope, qq: URLSearchParams) => session(s, parts.slice(1), qq)
        : ROUTES[parts.join('/')];
    if (route === undefined) throw notFound(`no such API path: /api/${parts.join('/')}`, 'see crux-ui(1) for the paths');
    const [ctx, document, documentText] = await route(scope, q, parts);
    return { status: 200, body: withWarnings(documentText ?? JSON.stringify(document), ctx.warnings) };
  } catch (error) {
    const crux = error instanceof CruxError ? error : internalError(error, Boolean(scope.env.CRUX_DEBUG));
    const warnings = [...new Map(contexts.flatMap((c) => c.warnings).map((w) => [JSON.stringify(w), w])).values()];
    return { status: HTTP_STATUS[crux.kind] ?? 500, body: withWarnings(JSON.stringify(errorDocument(crux)), warnings) };
  }
}
