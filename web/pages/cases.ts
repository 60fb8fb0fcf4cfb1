// Cases: retrieve by task text (the ranking of `case retrieve`, with each similarity), and browse by tag and outcome.
import { get, type Case } from '../api';
import { ago, badge, el, table } from '../dom';

const caseRow = (c: Case) => [
  el('code', {}, c.case_id),
  el('span', { class: 'task' }, c.task),
  c.action,
  c.success ? badge('success') : badge('failure'),
  c.tags.map((t) => badge(t, 'tag')),
  c.times_reused,
  ago(c.created_at),
];

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
  const parts: HTMLElement[] = [
    el('h2', {}, 'Cases'),
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
        ['similarity', 'case', 'task', 'action', 'outcome', 'tags', 'reused', 'created'],
        results.map((r) => [
          el('span', { class: 'sim' }, el('span', { class: 'sim-bar', style: `width:${(r.similarity * 100).toFixed(0)}%` }), r.similarity.toFixed(3)),
          ...caseRow(r.case),
        ]),
        'no case shares a word with that task',
      ),
    );
  }
  const { cases: list } = await get<{ cases: Case[] }>('cases', {
    tag: tag || undefined,
    only_success: outcome === 'success' ? 1 : undefined,
    only_failure: outcome === 'failure' ? 1 : undefined,
    sort: '-created',
    limit: 100,
  });
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
    table(['case', 'task', 'action', 'outcome', 'tags', 'reused', 'created'], list.map(caseRow), 'no cases match'),
    el('p', { class: 'muted' }, `${list.length} shown, newest first${list.length === 100 ? ' (the newest 100)' : ''}`),
  );
  return el('div', { class: 'page' }, parts);
}
