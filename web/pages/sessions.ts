// Sessions: the list with filters (agent, status, stranded, id), and one session: its state (pretty and the exact
// bytes), its close record, and its history as a timeline with the difference between consecutive versions.
import { get, type Session } from '../api';
import { ago, badge, block, el, href, line, show, table } from '../dom';
import { diffLines, pretty } from '../diff';
import { sessionLink } from './overview';

const STATUSES = ['active', 'handed_off', 'archived', 'closed'];

export async function sessions(params: URLSearchParams): Promise<HTMLElement> {
  const agent = params.get('agent') ?? '';
  const status = params.get('status') ?? '';
  const stranded = params.get('stranded') === '1';
  const q = params.get('q') ?? '';
  const limit = Number(params.get('limit') ?? 200) || 200;
  // As `session list`: active and handed-off sessions unless a status is asked for (all: closed and archived too).
  const list = await get<{ sessions: Session[] }>('sessions', {
    agent: agent || undefined,
    status: status === '' || status === 'all' ? undefined : status,
    all: status === 'all' ? 1 : undefined,
    stranded: stranded ? 1 : undefined,
    limit: q === '' ? limit : undefined,
  });
  const shown = q === '' ? list.sessions : list.sessions.filter((s) => s.session_id.includes(q)).slice(0, limit);
  const go = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const next = new URLSearchParams();
    for (const [k, v] of form) if (v !== '') next.set(k, String(v));
    location.hash = `#/sessions?${next}`;
  };
  return el(
    'div',
    { class: 'page' },
    el('h2', {}, 'Sessions'),
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
      el('label', {}, el('input', { type: 'checkbox', name: 'stranded', value: '1', checked: stranded }), ' stranded'),
      el('button', { type: 'submit' }, 'Filter'),
    ),
    table(
      ['session', 'agent', 'status', 'freshness', 'updated', 'tokens', 'expires'],
      shown.map((s) => [sessionLink(s), s.agent ?? '-', badge(s.status), badge(s.freshness), ago(s.updated_at), s.total_tokens, ago(s.expires_at)]),
      'no sessions match',
    ),
    el('p', { class: 'muted' }, `${shown.length} shown${shown.length >= limit ? ` (the first ${limit}; narrow the filter)` : ''}`),
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
    el('h2', {}, s.session_id, ' ', badge(s.status), ' ', badge(s.freshness)),
    table(
      ['agent', 'updated', 'expires', 'tokens', 'actor', 'archived'],
      [
        [
          s.agent ?? '- (unscoped)',
          ago(s.updated_at),
          ago(s.expires_at),
          s.total_tokens,
          s.actor ?? '-',
          s.archived ? `yes: ${line(s.archive_reason ?? '')}` : 'no',
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
