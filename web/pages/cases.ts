// Cases: retrieve by task text (the ranking of `case retrieve`, with each similarity), and browse by tag and outcome.
import { get, type Case } from '../api';
import { ago, badge, block, cut, cutLink, el, emptyState, href, jsonTwin, table } from '../dom';

/** Cases a page shows. */
const PAGE = 50;

const caseRow = (c: Case) => [
  cutLink(href('cases', c.case_id), c.case_id),
  cutLink(href('cases', c.case_id), c.task, 'wide'),
  cut(c.action, 'wide'),
  c.success ? badge('success') : badge('failure'),
  c.tags.map((t) => badge(t, 'tag')),
  c.times_reused,
  ago(c.created_at),
];

/** One field of a case: its name, and its text whole (wrapped, never cut: this is the case's own page). */
const field = (name: string, value: string | null | undefined, id?: string) =>
  el('div', { class: 'field' }, el('dt', {}, name), el('dd', {}, value ? el('div', { class: 'text', id }, block(value)) : el('span', { class: 'muted' }, '-')));

/** A case's own page, `#/cases/<id>`: every field whole; its JSON twin is `/api/cases/<id>` (`case show --json`). */
export async function casePage(id: string): Promise<HTMLElement> {
  const { case: c } = await get<{ case: Case }>(`cases/${encodeURIComponent(id)}`);
  return el(
    'div',
    { class: 'page case' },
    el('p', {}, el('a', { href: href('cases') }, '← cases')),
    el(
      'div',
      { class: 'title' },
      el('h2', {}, 'Case ', cut(c.case_id), ' ', c.success ? badge('success') : badge('failure')),
      jsonTwin(`cases/${encodeURIComponent(id)}`),
    ),
    el(
      'dl',
      { class: 'fields' },
      field('task', c.task, 'case-task'),
      field('context', c.context, 'case-context'),
      field('action', c.action, 'case-action'),
      field('outcome', c.outcome, 'case-outcome'),
      el(
        'div',
        { class: 'field' },
        el('dt', {}, 'result'),
        el('dd', {}, c.success ? 'success' : 'failure', ` · reward ${c.reward ?? '-'} · reused ${c.times_reused} time(s) · recorded `, ago(c.created_at)),
      ),
      el(
        'div',
        { class: 'field' },
        el('dt', {}, 'tags'),
        el(
          'dd',
          {},
          c.tags.length === 0
            ? el('span', { class: 'muted' }, 'none')
            : c.tags.map((t) => [el('a', { href: `#/cases?tag=${encodeURIComponent(t)}` }, badge(t, 'tag')), ' ']),
        ),
      ),
      field('receipt', c.source_receipt),
      el('div', { class: 'field' }, el('dt', {}, 'id'), el('dd', {}, el('code', { class: 'whole' }, c.case_id))),
    ),
  );
}

export async function cases(params: URLSearchParams): Promise<HTMLElement> {
  const task = params.get('task') ?? '';
  const tag = params.get('tag') ?? '';
  const outcome = params.get('outcome') ?? '';
  const nav = (event: Event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(event.target as HTMLFormElement)) if (v !== '') next.set(k, String(v));
    location.hash = `#/cases?${next}`;
  };
  const parts: (HTMLElement | null)[] = [
    el('div', { class: 'title' }, el('h2', {}, 'Cases'), jsonTwin(`cases?sort=-created&offset=${Number(params.get('offset') ?? 0) || 0}&limit=50`)),
    el(
      'form',
      { class: 'filters', onsubmit: nav },
      el('input', { name: 'task', placeholder: 'a task, as an agent would ask', value: task, 'aria-label': 'task', size: 40 }),
      el('button', { type: 'submit' }, 'Retrieve'),
    ),
  ];
  if (task !== '') {
    const { results } = await get<{ results: { similarity: number; case: Case }[] }>('cases/retrieve', { task, top_k: 20 });
    parts.push(
      el('h3', {}, `Best matches for “`, task, '”'),
      table(
        ['similarity', 'case', 'task', 'action', 'result', 'tags', 'reused', 'created'],
        results.map((r) => [
          el('span', { class: 'sim' }, el('span', { class: 'sim-bar', style: `width:${(r.similarity * 100).toFixed(0)}%` }), r.similarity.toFixed(3)),
          ...caseRow(r.case),
        ]),
        'no case shares a word with that task',
      ),
    );
  }
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const query = {
    tag: tag || undefined,
    only_success: outcome === 'success' ? 1 : undefined,
    only_failure: outcome === 'failure' ? 1 : undefined,
    sort: '-created',
    offset,
    limit: PAGE,
  };
  const { cases: list, total } = await get<{ cases: Case[]; total: number }>('cases', query);
  const at = (next: number) => {
    const p = new URLSearchParams(params);
    if (next === 0) p.delete('offset');
    else p.set('offset', String(next));
    return `#/cases?${p}`;
  };
  parts.push(
    el('h3', {}, 'Browse'),
    el(
      'form',
      { class: 'filters', onsubmit: nav },
      task === '' ? null : el('input', { type: 'hidden', name: 'task', value: task }),
      el('input', { name: 'tag', placeholder: 'tag', value: tag, 'aria-label': 'tag' }),
      el(
        'select',
        { name: 'outcome', 'aria-label': 'outcome' },
        ['', 'success', 'failure'].map((o) => el('option', { value: o, selected: o === outcome }, o === '' ? 'any outcome' : o)),
      ),
      el('button', { type: 'submit' }, 'Browse'),
    ),
    table(
      ['case', 'task', 'action', 'result', 'tags', 'reused', 'created'],
      list.map(caseRow),
      tag === '' && outcome === ''
        ? emptyState(
            'No cases yet. An agent records what it tried and how it went:',
            'crux case record --task "…" --action "…" --outcome "…" [--failure] [--tag t]',
            'crux case import cases.jsonl',
          )
        : 'no cases match',
    ),
    el(
      'p',
      { class: 'total', id: 'cases-total' },
      el('strong', {}, total),
      ` case${total === 1 ? '' : 's'}, newest first`,
      total > list.length ? ` · ${offset + 1}–${offset + list.length} shown` : '',
    ),
    total > PAGE
      ? el(
          'nav',
          { class: 'pager', 'aria-label': 'pages' },
          offset > 0 ? el('a', { href: at(Math.max(0, offset - PAGE)), rel: 'prev' }, '← previous') : el('span', { class: 'muted' }, '← previous'),
          el('span', {}, `page ${Math.floor(offset / PAGE) + 1} of ${Math.ceil(total / PAGE)}`),
          offset + PAGE < total ? el('a', { href: at(offset + PAGE), rel: 'next' }, 'next →') : el('span', { class: 'muted' }, 'next →'),
        )
      : null,
  );
  return el('div', { class: 'page' }, parts);
}
