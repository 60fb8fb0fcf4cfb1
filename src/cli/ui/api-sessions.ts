// `/api/sessions`: `session list --json` with the list's options as query parameters (SPEC §12), and the
// dashboard's own filters and paging on top. Without those the document is the CLI's, byte for byte; with any
// of them (offset, outcome, closed_within, expired, expiring_within, q) it also says `total` (how many match)
// and `offset`, so that the sessions page shows its total and pages through it. Cost follows the answer: a
// newest-first page of a plain or --stranded list reads offset + limit rows and counts the rest from the index.
import type { Context } from '../context';
import { parseChoices, parseCount, parseLimit, parseSort } from '../parse';
import { countedSessions } from '../operations/session';
import { invalid } from '../../shared/errors';
import { parseDuration } from '../../shared/time';
import { SESSION_ORDERS } from '../../domain/list-window';
import { SESSION_STATES, type SessionStatus } from '../../domain/session/machine';
import { CLOSE_OUTCOMES } from '../../domain/session/events';
import { closedWith, expiresWithin, isExpiredUnreaped } from '../../domain/session/attention';
import type { SessionView } from '../../domain/session/view';

/** A flag as a query parameter: present, empty, 1 or true is on; 0 or false is off. */
export function flag(q: URLSearchParams, name: string): boolean | undefined {
  const raw = q.get(name);
  if (raw === null) return undefined;
  if (raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw invalid(`${name} must be 1, true, 0 or false: ${JSON.stringify(raw)}`);
}

export const text = (q: URLSearchParams, name: string) => q.get(name) ?? undefined;
export const many = (q: URLSearchParams, name: string) => (q.getAll(name).length > 0 ? q.getAll(name) : undefined);

/** The dashboard's filters beyond `session list`'s, as one predicate (undefined when none is asked). */
function extraFilter(ctx: Context, q: URLSearchParams): ((v: SessionView) => boolean) | undefined {
  const tests: ((v: SessionView) => boolean)[] = [];
  const outcomes = parseChoices<string>(many(q, 'outcome'), CLOSE_OUTCOMES, 'outcome');
  const closedWithin = text(q, 'closed_within');
  if (outcomes !== undefined || closedWithin !== undefined) {
    const within = closedWithin === undefined ? undefined : parseDuration(closedWithin, 'closed_within');
    tests.push((v) => closedWith(v, outcomes ?? CLOSE_OUTCOMES, ctx.now, within));
  }
  if (flag(q, 'expired') === true) tests.push((v) => isExpiredUnreaped(v, ctx.now));
  const expiring = text(q, 'expiring_within');
  if (expiring !== undefined) {
    const within = parseDuration(expiring, 'expiring_within');
    tests.push((v) => expiresWithin(v, ctx.now, within));
  }
  const contains = text(q, 'q');
  if (contains !== undefined && contains !== '') tests.push((v) => v.session_id.includes(contains));
  return tests.length === 0 ? undefined : (v) => tests.every((t) => t(v));
}

const PAGED = ['offset', 'outcome', 'closed_within', 'expired', 'expiring_within', 'q'];

export async function sessionsDocument(ctx: Context, q: URLSearchParams, agent: string | undefined): Promise<unknown> {
  const statuses = parseChoices<SessionStatus>(many(q, 'status'), SESSION_STATES, 'status');
  const extra = extraFilter(ctx, q);
  const byStatus = statuses && ((s: { status: string }) => (statuses as readonly string[]).includes(s.status));
  const where = byStatus && extra ? (s: SessionView) => byStatus(s) && extra(s) : (byStatus ?? extra);
  const offsetRaw = text(q, 'offset');
  const offset = offsetRaw === undefined ? 0 : parseCount(offsetRaw, 'offset');
  const limit = parseLimit(text(q, 'limit'));
  const filter = {
    // An outcome, an expiry or an id to look for may be any status's (a reaper closes archived sessions too).
    all: flag(q, 'all') === true || statuses !== undefined || extra !== undefined,
    archived: flag(q, 'archived') === true,
    stranded: flag(q, 'stranded') === true,
    allAgents: flag(q, 'all_agents') ?? agent === undefined,
  };
  const window = { sort: parseSort(text(q, 'sort'), SESSION_ORDERS), limit: limit === undefined ? undefined : offset + limit, where };
  const paged = PAGED.some((name) => q.has(name));
  const { document, total } = await countedSessions(ctx, filter, { freshFor: text(q, 'fresh_for'), staleAfter: text(q, 'stale_after') }, window, {
    count: paged,
    // Only --status's own filter: a limited list reads its statuses' rows through the index.
    statuses: extra === undefined ? statuses : undefined,
  });
  if (!paged) return document;
  return { ...document, sessions: document.sessions.slice(offset), total: total ?? document.sessions.length, offset };
}
