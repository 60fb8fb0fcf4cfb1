// Sessions: the list with filters (agent, status, stranded, id), and one session: its state (pretty and the exact
// bytes), its close record, and its history as a timeline with the difference between consecutive versions.
import { get, type Session } from '../api';
import { ago, badge, block, cut, el, emptyState, href, jsonTwin, line, show, table } from '../dom';
import { diffLines, pretty } from '../diff';
import { sessionLink } from './overview';

const STATUSES = ['active', 'handed_off', 'archived', 'closed'];
const OUTCOMES: [string, string][] = [
  ['', 'any outcome'],
  ['failed,abandoned', 'failed or abandoned'],
  ['failed', 'failed'],
  ['abandoned', 'abandoned'],
  ['completed', 'completed'],
  ['expired', 'expired (reaped)'],
];
const SORTS: [string, string][] = [
  ['', 'newest first'],
  ['updated', 'oldest write first'],
  ['-tokens', 'most tokens'],
  ['expires', 'soonest expiry'],
  ['id', 'id'],
  ['agent', 'agent'],
  ['status', 'status'],
];
/** Rows a page shows. */
export const PAGE_SIZE = 50;
/** The query parameters of the list page that are the API's too (the page's address is its twin's). */
const PASSED = ['agent', 'status', 'stranded', 'q', 'outcome', 'closed_within', 'expired', 'expiring_within', 'sort', 'offset', 'limit'];

/** What the filters that have no field of their own say, in words (the attention links set them). */
function described(params: URLSearchParams): string[] {
  const out: string[] = [];
  if (params.get('closed_within')) out.push(`closed within ${params.get('closed_within')}`);
  if (params.get('expired') === '1') out.push('expired, not reaped');
  if (params.get('expiring_within')) out.push(`expiring within ${params.get('expiring_within')}`);
  return out;
}

export async function sessions(params: URLSearchParams): Promise<HTMLElement> {
  const agent = params.get('agent') ?? '';
  const status = params.get('status') ?? '';
  const stranded = params.get('stranded') === '1';
  const outcome = params.get('outcome') ?? '';
  const sort = params.get('sort') ?? '';
  const q = params.get('q') ?? '';
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const limit = Math.min(500, Number(params.get('limit') ?? PAGE_SIZE) || PAGE_SIZE);
  // As `session list`: active and handed-off sessions unless a status is asked for (all: closed and archived too).
  const query: Record<string, string | number | undefined> = {};
  for (const name of PASSED) query[name] = params.get(name) ?? undefined;
  Object.assign(query, {
    status: status === '' || status === 'all' ? undefined : status,
    all: status === 'all' ? 1 : undefined,
    offset,
    limit,
  });
  const list = await get<{ sessions: Session[]; total: number; offset: number; hidden_scoped: number }>('sessions', query);
  const at = (changes: Record<string, string | number | undefined>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined || v === '' || v === 0) next.delete(k);
      else next.set(k, String(v));
    }
    return `#/sessions${next.size > 0 ? `?${next}` : ''}`;
  };
  const go = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const next = new URLSearchParams();
    for (const [k, v] of form) if (v !== '') next.set(k, String(v));
    location.hash = `#/sessions${next.size > 0 ? `?${next}` : ''}`;
  };
  const kept = ['closed_within', 'expired', 'expiring_within'].filter((k) => params.get(k));
  const notes = described(params);
  const first = list.total === 0 ? 0 : offset + 1;
  const last = offset + list.sessions.length;
  const twin = new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
  return el(
    'div',
    { class: 'page' },
    el('div', { class: 'title' }, el('h2', {}, 'Sessions'), jsonTwin(`sessions?${twin}`)),
    el(
      'form',
      { class: 'filters', onsubmit: go },
      el('input', { name: 'q', placeholder: 'id contains…', value: q, 'aria-label': 'search by id' }),
      el('input', { name: 'agent', placeholder: 'agent', value: agent, 'aria-label': 'agent' }),
      el(
        'select',
        { name: 'status', 'aria-label': 'status' },
        el('option', { value: '' }, 'active and handed off'),
        el('option', { value: 'all', selected: status === 'all' }, 'every status'),
        STATUSES.map((s) => el('option', { value: s, selected: s === status }, s)),
      ),
      el(
        'select',
        { name: 'outcome', 'aria-label': 'outcome' },
        OUTCOMES.map(([v, label]) => el('option', { value: v, selected: v === outcome }, label)),
      ),
      el(
        'select',
        { name: 'sort', 'aria-label': 'order' },
        SORTS.map(([v, label]) => el('option', { value: v, selected: v === sort }, label)),
        SORTS.some(([v]) => v === sort) ? null : el('option', { value: sort, selected: true }, `sorted by ${sort}`),
      ),
      el('label', { class: 'check' }, el('input', { type: 'checkbox', name: 'stranded', value: '1', checked: stranded }), ' stranded'),
      kept.map((k) => el('input', { type: 'hidden', name: k, value: params.get(k)! })),
      el('button', { type: 'submit' }, 'Filter'),
      params.size > 0 ? el('a', { href: '#/sessions' }, 'clear') : null,
    ),
    notes.length === 0
      ? null
      : el(
          'p',
          { class: 'filtered' },
          'Only sessions ',
          notes.join(', '),
          ' · ',
          el('a', { href: at(Object.fromEntries(kept.map((k) => [k, undefined]))) }, 'drop'),
        ),
    el(
      'p',
      { class: 'total', id: 'total' },
      el('strong', {}, list.total),
      ` session${list.total === 1 ? '' : 's'}${stranded ? ' stranded' : ''}`,
      list.total > list.sessions.length ? ` · ${first}–${last} shown` : '',
      list.hidden_scoped > 0 ? ` · ${list.hidden_scoped} scoped hidden` : '',
    ),
    table(
      [
        { title: 'session', sort: 'id' },
        { title: 'agent', sort: 'agent' },
        { title: 'status', sort: 'status' },
        'outcome',
        'freshness',
        { title: 'updated', sort: 'updated' },
        { title: 'tokens', sort: 'tokens' },
        { title: 'expires', sort: 'expires' },
      ],
      list.sessions.map((s) => [
        sessionLink(s),
        s.agent === null ? '-' : cut(s.agent),
        badge(s.status),
        s.outcome ? badge(s.outcome) : '-',
        s.freshness === null ? '-' : badge(s.freshness),
        ago(s.updated_at),
        s.total_tokens,
        ago(s.expires_at),
      ]),
      params.size === 0
        ? emptyState('No open sessions. An agent saves one with', "crux session put <id> '<json>'", 'crux session list --all    # closed and archived ones too')
        : 'no sessions match these filters',
      { current: sort || undefined, link: (key) => at({ sort: key, offset: undefined }) },
    ),
    list.total > limit
      ? el(
          'nav',
          { class: 'pager', 'aria-label': 'pages' },
          offset > 0 ? el('a', { href: at({ offset: Math.max(0, offset - limit) }), rel: 'prev' }, '← previous') : el('span', { class: 'muted' }, '← previous'),
          el('span', {}, `page ${Math.floor(offset / limit) + 1} of ${Math.ceil(list.total / limit)}`),
          last < list.total ? el('a', { href: at({ offset: offset + limit }), rel: 'next' }, 'next →') : el('span', { class: 'muted' }, 'next →'),
        )
      : null,
  );
}

interface HistoryEntry {
  seq: number;
  ts: string;
  ev: string;
  actor: string | null;
  status: string | null;
  state_bytes: number | null;
}

/** The document's session and the state's exact bytes (spliced into the document as stored, SPEC §8). */
async function fetchSession(agent: string, id: string, at?: number): Promise<{ session: Session; exact: string }> {
  const path = `sessions/${encodeURIComponent(agent)}/${encodeURIComponent(id)}`;
  const res = await fetch(`/api/${path}${at === undefined ? '' : `?at=${at}`}`, { credentials: 'same-origin' });
  const text = await res.text();
  const doc = JSON.parse(text);
  if (!res.ok) throw new Error(doc.error?.message ?? `HTTP ${res.status}`);
  const session = doc.session as Session & { state_text?: string };
  if (session.state_text !== undefined) return { session, exact: session.state_text };
  const start = text.indexOf('"state":') + '"state":'.length;
  const end = doc.warnings === undefined ? text.trimEnd().length - 2 : text.lastIndexOf('},"warnings":');
  return { session, exact: text.slice(start, end) };
}

function diffView(before: string, after: string): HTMLElement {
  const lines = diffLines(pretty(before), pretty(after));
  const changed = lines.filter((l) => l.op !== ' ').length;
  return el(
    'div',
    { class: 'diff' },
    el('p', { class: 'muted' }, changed === 0 ? 'no change to the state' : `${changed} line(s) changed`),
    el(
      'pre',
      {},
      lines.map((l) => el('span', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx' }, block(`${l.op} ${l.text}\n`))),
    ),
  );
}

export async function session(agent: string, id: string): Promise<HTMLElement> {
  const [{ session: s, exact }, { history }] = await Promise.all([
    fetchSession(agent, id),
    get<{ history: HistoryEntry[] }>(`sessions/${encodeURIComponent(agent)}/${encodeURIComponent(id)}/history`, { limit: 100 }),
  ]);
  const detail = el('div', { class: 'version', id: 'version' }, el('p', { class: 'muted' }, 'pick a version to see what it changed'));
  const pick = async (i: number) => {
    const entry = history[i]!;
    const previous = history.slice(i + 1).find((h) => h.state_bytes !== null);
    show(detail, el('p', {}, `record ${entry.seq} · ${entry.ev} · loading…`));
    try {
      const now = entry.state_bytes === null ? '' : (await fetchSession(agent, id, entry.seq)).exact;
      const before = previous === undefined ? '' : (await fetchSession(agent, id, previous.seq)).exact;
      show(
        detail,
        el('h4', {}, `record ${entry.seq}: ${line(entry.ev)}${previous === undefined ? ' (first version)' : ` against record ${previous.seq}`}`),
        diffView(before, now),
      );
    } catch (error) {
      show(detail, el('p', { class: 'error' }, (error as Error).message));
    }
    for (const [k, node] of timeline.querySelectorAll('li').entries()) node.classList.toggle('picked', k === i);
  };
  const timeline = el(
    'ol',
    { class: 'timeline' },
    history.map((h, i) =>
      el(
        'li',
        {},
        el(
          'button',
          { type: 'button', onclick: () => void pick(i) },
          el('strong', {}, `#${h.seq}`),
          ' ',
          h.ev.replace(/^session\./, ''),
          ' ',
          h.status === null ? '' : badge(h.status),
          ' ',
          ago(h.ts),
          h.actor === null ? '' : ` by ${line(h.actor)}`,
          h.state_bytes === null ? '' : ` · ${h.state_bytes} B`,
        ),
      ),
    ),
  );
  const closeRecord =
    s.status === 'closed'
      ? el(
          'section',
          { class: 'card' },
          el('h3', {}, 'Closed'),
          el('p', {}, badge(s.outcome ?? 'closed'), ' ', ago(s.closed_at ?? null)),
          s.summary ? el('pre', { class: 'summary' }, block(s.summary)) : el('p', { class: 'muted' }, 'no summary'),
        )
      : null;
  return el(
    'div',
    { class: 'page' },
    el('p', {}, el('a', { href: href('sessions') }, '← sessions')),
    el(
      'div',
      { class: 'title' },
      el('h2', {}, cut(s.session_id, 'wide'), ' ', badge(s.status), s.freshness === null ? '' : [' ', badge(s.freshness)]),
      jsonTwin(`sessions/${encodeURIComponent(agent)}/${encodeURIComponent(id)}`),
    ),
    // The id whole, wrapped where it must be: this is its own page.
    el('p', { class: 'whole' }, el('span', { class: 'muted' }, 'id '), el('code', { id: 'whole-id' }, s.session_id)),
    table(
      ['agent', 'updated', 'expires', 'tokens', 'actor', 'archived'],
      [
        [
          s.agent === null ? '- (unscoped)' : cut(s.agent),
          ago(s.updated_at),
          ago(s.expires_at),
          s.total_tokens,
          s.actor === null ? '-' : cut(s.actor),
          s.archived ? cut(`yes: ${line(s.archive_reason ?? '')}`, 'wide') : 'no',
        ],
      ],
    ),
    closeRecord,
    el(
      'div',
      { class: 'two' },
      el('section', {}, el('h3', {}, 'State'), el('pre', { class: 'state', id: 'state-pretty' }, block(pretty(exact)))),
      el(
        'section',
        {},
        el('h3', {}, `Exact bytes (${new TextEncoder().encode(exact).length} B)`),
        el('pre', { class: 'state', id: 'state-exact' }, block(exact)),
      ),
    ),
    el('h3', {}, `History (${history.length}${history.length === 100 ? ', the newest 100' : ''})`),
    el('div', { class: 'two' }, timeline, detail),
  );
}
