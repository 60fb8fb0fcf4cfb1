// Session operations as every adapter runs them (CLI, MCP, hooks): a context and a parsed command in, the
// `--json` document out (SPEC §8), so the CLI's --json and an MCP tool's structuredContent are one value.
import type { Context } from '../context';
import { envCount } from '../parse';
import type { ThresholdFlags } from '../thresholds';
import { maxStateBytes, sessionScope } from './scope';
import { invalid } from '../../shared/errors';
import type { LogicalSessionId } from '../../shared/ids';
import { spliceState } from '../../domain/session/transfer-lines';
import type { PutCommand } from '../../domain/session/decide';
import type { ListFilter } from '../../domain/session/query';
import * as store from '../../domain/session/store';
import { listNewest } from '../../domain/session/newest-list';
import type { SessionStatus } from '../../domain/session/machine';
import type { SessionView } from '../../domain/session/view';
import { windowOf, SESSION_ORDERS, type ListWindow, type SessionOrder } from '../../domain/list-window';
import { getSessionAt, sessionHistory, type HistoryPoint } from '../../domain/session/history';

export { CALLER_CLOSE_OUTCOMES as CLOSE_OUTCOMES } from '../../domain/session/events';
import { CALLER_CLOSE_OUTCOMES as CLOSE_OUTCOMES } from '../../domain/session/events';

export { maxStateBytes };

/** The token ceiling of a put: the option given, else CRUX_SESSION_TOKEN_BUDGET. */
export const tokenBudget = (ctx: Context, given: number | undefined) => given ?? envCount(ctx.env, 'CRUX_SESSION_TOKEN_BUDGET', undefined);

export async function putSession(ctx: Context, id: LogicalSessionId, cmd: Omit<PutCommand, 'key' | 'actor'>) {
  return { session: await store.putSession(sessionScope(ctx), id, cmd) };
}

/**
 * `session get`: the stored bytes, and the --json document as text, the state spliced in byte-for-byte. With
 * `at`, the session as it was then (from the journal and history/; exit 3 when it did not exist then).
 */
export async function getSession(ctx: Context, id: LogicalSessionId, at?: HistoryPoint): Promise<{ state: string; documentText: string }> {
  const scope = sessionScope(ctx);
  const { session, state } = at === undefined ? await store.getSession(scope, id) : await getSessionAt(scope, id, at);
  // JSON.stringify would re-encode the state's numbers and key order: the stored bytes go in as they are.
  return { state, documentText: `{"session":${spliceState(JSON.stringify(session), state)}}` };
}

/** `session history`: every recorded version, newest first, with the seq that `get --at` takes. */
export async function historyOf(ctx: Context, id: LogicalSessionId, limit: number | undefined) {
  return (await countedHistory(ctx, id, limit)).document;
}

/** As historyOf, with how many versions there are, shown or not. */
export async function countedHistory(ctx: Context, id: LogicalSessionId, limit: number | undefined) {
  const { history, total } = await sessionHistory(sessionScope(ctx), id, { limit });
  return { document: { history }, total };
}

/** `session list`: the filter picks the sessions, the window (--sort, --status, --limit) what of them is shown. */
export async function listSessions(
  ctx: Context,
  filter: Omit<ListFilter, 'agent'>,
  flags?: ThresholdFlags & { limit?: number | undefined },
  window: ListWindow<SessionView, SessionOrder> = {},
) {
  return (await countedSessions(ctx, filter, flags, window)).document;
}

/**
 * As listSessions, with how many sessions matched, shown or not (a list cut short says how many more there
 * are). `count: false`: the caller shows no such count (its total may then be undefined, and a limited list
 * reads the rows it shows only). `statuses`: the window's `where` is exactly "the status is one of these"
 * (--status), which a limited list reads through the index too.
 */
export async function countedSessions(
  ctx: Context,
  filter: Omit<ListFilter, 'agent'>,
  flags?: ThresholdFlags & { limit?: number | undefined },
  window: ListWindow<SessionView, SessionOrder> = {},
  opts: { count?: boolean; statuses?: readonly SessionStatus[] | undefined } = {},
) {
  const scope = sessionScope(ctx, flags);
  const limit = window.limit ?? flags?.limit;
  const byStatusOnly = window.where === undefined || opts.statuses !== undefined;
  // Newest first and only cut: the store reads just the rows shown, and counts the rest from its index.
  const limited = window.sort === undefined && byStatusOnly && limit !== undefined ? await listNewest(scope, filter, limit, opts) : undefined;
  if (limited !== undefined)
    return { document: { sessions: limited.sessions, hidden_scoped: limited.hidden_scoped, all_agents: filter.allAgents }, total: limited.total };
  const listing = await store.listStoredSessions(scope, filter);
  const { rows: sessions, total } = windowOf(listing.sessions, SESSION_ORDERS, { ...window, limit });
  return { document: { ...listing, sessions, all_agents: filter.allAgents }, total };
}

export async function archiveSession(ctx: Context, id: LogicalSessionId, reason: string | undefined) {
  return { session: await store.archiveSession(sessionScope(ctx), id, reason) };
}

export async function unarchiveSession(ctx: Context, id: LogicalSessionId) {
  return { session: await store.unarchiveSession(sessionScope(ctx), id) };
}

export function closeSession(ctx: Context, id: LogicalSessionId, cmd: { outcome: (typeof CLOSE_OUTCOMES)[number]; summary?: string | undefined }) {
  return store.closeSession(sessionScope(ctx), id, cmd);
}

/** A hook's touch: updated_at moved (state kept), or the session created from `create` when there is none. */
export function touchSession(ctx: Context, id: LogicalSessionId, create: Omit<PutCommand, 'key' | 'actor'>) {
  return store.touchSession(sessionScope(ctx), id, create);
}

/** `--outcome` / `outcome`: how a caller may end a session (expired is the reaper's). */
export function parseCloseOutcome(raw: string, what = '--outcome'): (typeof CLOSE_OUTCOMES)[number] {
  if ((CLOSE_OUTCOMES as readonly string[]).includes(raw)) return raw as (typeof CLOSE_OUTCOMES)[number];
  throw invalid(`${what} must be one of ${CLOSE_OUTCOMES.join(', ')}: ${JSON.stringify(raw)}`, "expired is the reaper's");
}
