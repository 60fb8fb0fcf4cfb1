// Handoffs: who handed what to whom as a graph of agents (an edge per source and target, its width the count),
// and the list with each package's status.
import { get } from '../api';
import { ago, badge, cut, cutLink, el, emptyState, href, jsonTwin, svg, table, type Child } from '../dom';

interface Row {
  direction: string;
  handoff_id: string | null;
  session_id: string;
  source_agent: string;
  target_agent: string | null;
  accepted_by: string | null;
  status: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  content_hash: string;
  signature_alg: string;
  facts: number;
}

function graph(rows: Row[]): HTMLElement {
  const edges = new Map<string, { from: string; to: string; n: number; outstanding: number }>();
  for (const r of rows) {
    const to = r.target_agent ?? r.accepted_by ?? '(anyone)';
    const key = `${r.source_agent}\u0000${to}`;
    const e = edges.get(key) ?? { from: r.source_agent, to, n: 0, outstanding: 0 };
    e.n += 1;
    if (r.status === 'outstanding') e.outstanding += 1;
    edges.set(key, e);
  }
  const agents = [...new Set([...edges.values()].flatMap((e) => [e.from, e.to]))].sort();
  if (agents.length === 0)
    return emptyState(
      'No handoffs yet. One agent hands a session to another with a signed package; the graph of who handed what to whom shows here:',
      'crux --agent planner handoff mint <session> --to builder',
      'crux --agent builder handoff accept <package>',
    );
  const W = 520;
  const R = 190;
  const at = new Map(
    agents.map((a, i) => [
      a,
      { x: W / 2 + R * Math.cos((2 * Math.PI * i) / agents.length - Math.PI / 2), y: W / 2 + R * Math.sin((2 * Math.PI * i) / agents.length - Math.PI / 2) },
    ]),
  );
  const lines: Child[] = [...edges.values()].map((e) => {
    const a = at.get(e.from)!;
    const b = at.get(e.to)!;
    const title = svg('title', {}, `${e.from} → ${e.to}: ${e.n} package(s), ${e.outstanding} outstanding`);
    if (e.from === e.to) return svg('circle', { cx: a.x, cy: a.y - 22, r: 14, class: 'edge' }, title);
    // Stop short of the target's node so the arrowhead shows; names sit outside the circle, away from the edges.
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    const k = (len - 30) / len;
    return svg(
      'line',
      {
        x1: a.x,
        y1: a.y,
        x2: a.x + (b.x - a.x) * k,
        y2: a.y + (b.y - a.y) * k,
        class: e.outstanding > 0 ? 'edge outstanding' : 'edge',
        'stroke-width': Math.min(8, 1 + Math.log2(e.n) * 1.5),
        'marker-end': 'url(#arrow)',
      },
      title,
    );
  });
  const nodes: Child[] = agents.map((a) => {
    const p = at.get(a)!;
    // The way out from the centre: the name goes there, beside the node.
    const dx = (p.x - W / 2) / R;
    const dy = (p.y - W / 2) / R;
    return svg(
      'g',
      { class: 'node' },
      svg('circle', { cx: p.x, cy: p.y, r: 24 }),
      svg('text', { x: p.x + dx * 32, y: p.y + dy * 36 + 4, 'text-anchor': dx > 0.3 ? 'start' : dx < -0.3 ? 'end' : 'middle' }, a),
    );
  });
  const defs = svg(
    'defs',
    {},
    svg(
      'marker',
      { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' },
      svg('path', { d: 'M0 0L10 5L0 10z', class: 'arrowhead' }),
    ),
  );
  return el(
    'figure',
    { class: 'graph' },
    svg('svg', { viewBox: `-110 0 ${W + 220} ${W + 20}`, role: 'img', 'aria-label': 'handoffs between agents' }, defs, lines, nodes),
    el(
      'figcaption',
      {},
      el(
        'ul',
        { class: 'legend', id: 'graph-legend' },
        el('li', {}, el('span', { class: 'swatch node-swatch' }), 'an agent'),
        el('li', {}, el('span', { class: 'swatch edge-swatch' }), 'packages from one agent to another, all accepted or ended'),
        el('li', {}, el('span', { class: 'swatch edge-swatch outstanding' }), 'some still outstanding (not yet accepted)'),
        el('li', {}, 'a thicker line: more packages; hover a line for its counts'),
      ),
    ),
  );
}

/** A button that fetches the package's checks (`handoff inspect`, as its target would) and shows them in its place. */
function checksButton(id: string): HTMLElement {
  const cell = el('span', { class: 'checks' });
  const button = el(
    'button',
    {
      type: 'button',
      onclick: async () => {
        button.disabled = true;
        try {
          const doc = await get<{ checks: Record<string, string>; details: Record<string, string> }>(`handoffs/${encodeURIComponent(id)}/inspect`);
          cell.replaceChildren(
            ...Object.entries(doc.checks).map(([name, status]) =>
              el(
                'span',
                { title: doc.details[name] ?? '' },
                badge(`${name}: ${status}`, status === 'ok' ? 'success' : status === 'failed' ? 'failure' : 'skipped'),
                ' ',
              ),
            ),
          );
        } catch (error) {
          cell.replaceChildren(el('span', { class: 'error' }, (error as Error).message));
        }
      },
    },
    'inspect',
  );
  cell.append(button);
  return cell;
}

export async function handoffs(): Promise<HTMLElement> {
  const { handoffs: rows, keys } = await get<{ handoffs: Row[]; keys: { agent?: string; fingerprint?: string; status?: string }[] }>('handoffs', {
    sort: '-created',
    limit: 500,
  });
  return el(
    'div',
    { class: 'page' },
    el('div', { class: 'title' }, el('h2', {}, 'Handoffs'), jsonTwin('handoffs?sort=-created&limit=500')),
    graph(rows),
    rows.length === 0
      ? null
      : table(
          ['handoff', 'session', 'from', 'to', 'status', 'created', 'expires', 'accepted', 'facts', 'signature', 'checks'],
          rows.map((r) => [
            cut(r.handoff_id ?? r.content_hash.slice(0, 12)),
            r.direction === 'minted' ? cutLink(href('session', r.source_agent, r.session_id), r.session_id) : cut(r.session_id),
            cut(r.source_agent),
            r.target_agent === null ? '-' : cut(r.target_agent),
            badge(r.status),
            ago(r.created_at),
            ago(r.expires_at),
            r.accepted_at === null ? '-' : [ago(r.accepted_at), r.accepted_by === null ? '' : [' by ', cut(r.accepted_by)]],
            r.facts,
            r.signature_alg,
            r.direction === 'minted' && r.handoff_id !== null ? checksButton(r.handoff_id) : '-',
          ]),
          'no handoffs',
        ),
    el('h3', {}, 'Trusted keys'),
    table(
      ['agent', 'fingerprint', 'status'],
      keys.map((k) => [k.agent === undefined ? '-' : cut(k.agent), cut(k.fingerprint ?? '-'), k.status ?? '-']),
      'no Ed25519 key trusted or revoked here (crux --agent A handoff trust <public-key> adds one)',
    ),
  );
}
