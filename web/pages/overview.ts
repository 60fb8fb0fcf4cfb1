// The overview: sessions by status and freshness with the stranded ones first, activity per hour over 7 days,
// the case bank's success rate by tag, and each journal's size and health.
import { get, type Session } from '../api';
import { ago, badge, bytes, el, href, table } from '../dom';
import { rateBars, stackedBars } from '../chart';

interface Counts {
  total: number;
  by_status: Record<string, number>;
  by_freshness: Record<string, number>;
  stranded: Session[];
}
interface Activity {
  since: string;
  series: string[];
  hours: ({ hour: string } & Record<string, number>)[];
}
interface Tags {
  cases: number;
  tags: { tag: string; cases: number; successes: number; success_rate: number }[];
}
interface Journals {
  store: string;
  location: string;
  journals: { name: string; bytes: number; modified_at: string | null }[];
}
interface Check {
  healthy: boolean;
  journals: { name: string; records: number; problems: unknown[] }[];
}

const cards = (title: string, counts: Record<string, number>) =>
  el(
    'section',
    { class: 'card' },
    el('h3', {}, title),
    el(
      'ul',
      { class: 'counts' },
      Object.entries(counts).map(([k, n]) => el('li', {}, badge(k), el('strong', {}, n))),
    ),
  );

export const sessionLink = (s: Session) => el('a', { href: href('session', s.agent ?? '-', s.session_id) }, s.session_id);

export async function overview(): Promise<HTMLElement> {
  const [counts, act, tags, journals] = await Promise.all([
    get<Counts>('overview/sessions'),
    get<Activity>('overview/activity'),
    get<Tags>('overview/tags'),
    get<Journals>('overview/journals'),
  ]);
  const health = el('p', { class: 'muted', id: 'health' }, 'checking the journals…');
  // The check verifies every record: it comes after the rest is on screen.
  get<Check>('journal/check').then(
    (c) => health.replaceChildren(c.healthy ? badge('healthy') : badge('damaged'), ` ${c.journals.reduce((n, j) => n + j.records, 0)} records verified`),
    (e: Error) => health.replaceChildren(badge('unknown'), ` ${e.message}`),
  );
  const entries = act.hours.map((h) => ({ label: h.hour, values: h }));
  const totals = act.series.map((s) => `${s} ${act.hours.reduce((n, h) => n + (h[s] ?? 0), 0)}`).join(' · ');
  return el(
    'div',
    { class: 'page overview' },
    el('h2', {}, 'Overview'),
    el(
      'div',
      { class: 'cards' },
      el('section', { class: 'card' }, el('h3', {}, 'Sessions'), el('p', { class: 'big' }, counts.total)),
      cards('By status', counts.by_status),
      cards('By freshness', counts.by_freshness),
    ),
    el('h3', {}, `Stranded (${counts.stranded.length}${counts.stranded.length === 20 ? '+' : ''})`),
    table(
      ['session', 'agent', 'status', 'updated', 'freshness'],
      counts.stranded.map((s) => [sessionLink(s), s.agent ?? '-', badge(s.status), ago(s.updated_at), badge(s.freshness)]),
      'no stranded sessions',
    ),
    el('h3', {}, 'Activity, last 7 days (per hour)'),
    // A grid line at each midnight (UTC), labelled with the day.
    stackedBars(entries, act.series, (label) => (label.endsWith('T00:00:00.000Z') ? label.slice(5, 10) : undefined)),
    el('p', { class: 'muted' }, totals),
    el('h3', {}, `Success rate by tag (${tags.cases} cases)`),
    tags.tags.length === 0
      ? el('p', { class: 'empty' }, 'no cases yet')
      : rateBars(tags.tags.map((t) => ({ label: t.tag, rate: t.success_rate, note: `${Math.round(t.success_rate * 100)}% of ${t.cases}` }))),
    el('h3', {}, 'Journals'),
    el('p', { class: 'muted' }, `${journals.store === 'postgres' ? 'PostgreSQL' : 'data directory'} ${journals.location}`),
    health,
    table(
      ['journal', 'size', 'last write'],
      journals.journals.map((j) => [j.name, bytes(j.bytes), j.modified_at === null ? '-' : ago(j.modified_at)]),
    ),
  );
}
