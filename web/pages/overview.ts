// The overview opens with what an operator must act on — journal damage, sessions that failed or were abandoned
// of late, expired ones no reaper closed, ones about to expire, stranded ones — each with its real count and a
// link to the list it counts; then sessions by status and freshness, activity per hour over 7 days (failures in
// their own colour), the case bank's success rate by tag, and each journal's size. An empty store says how to
// fill it.
import { get, type Session } from '../api';
import { ago, badge, bytes, cutLink, el, emptyState, href, jsonTwin, table, type Child } from '../dom';
import { rateBars, stackedBars } from '../chart';

interface Item {
  count: number;
  sessions: Session[];
}
interface Counts {
  total: number;
  by_status: Record<string, number>;
  by_freshness: Record<string, number>;
  attention: { failed_recently: Item; expired_unreaped: Item; expiring_soon: Item; stranded: Item; windows: { recent: string; soon: string } };
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

/** The activity chart's series as its legend names them. */
const SERIES_NAMES: Record<string, string> = {
  puts: 'session puts',
  closes: 'closed: completed',
  failed: 'closed: failed or abandoned',
  reaps: 'reaped (expired)',
  handoffs: 'handoffs',
  cases: 'cases recorded',
};

const cards = (title: string, counts: Record<string, number>, link: (key: string) => string | undefined) =>
  el(
    'section',
    { class: 'card' },
    el('h3', {}, title),
    el(
      'ul',
      { class: 'counts' },
      Object.entries(counts).map(([k, n]) => {
        const to = link(k);
        return el('li', {}, to === undefined ? badge(k) : el('a', { href: to }, badge(k)), el('strong', {}, n));
      }),
    ),
  );

export const sessionLink = (s: Session) => cutLink(href('session', s.agent ?? '-', s.session_id), s.session_id);

/** A list page's address with these filters. */
const sessionsWith = (params: Record<string, string>) => `#/sessions?${new URLSearchParams(params)}`;

/** One thing that may need attention: its count (a link to the list it counts), a few of them, and what it means. */
function attentionCard(id: string, title: string, item: Item, link: string, when: (s: Session) => Child, meaning: string): HTMLElement {
  const n = item.count;
  return el(
    'section',
    { class: `card attention ${n > 0 ? 'alert' : 'ok'}`, id: `attention-${id}` },
    el('h3', {}, title),
    el('p', { class: 'big' }, el('a', { href: link, class: 'count', title: `list them (${n})` }, n)),
    n === 0
      ? el('p', { class: 'muted' }, meaning)
      : el(
          'ul',
          { class: 'few' },
          item.sessions.map((s) => el('li', {}, sessionLink(s), ' ', el('span', { class: 'muted' }, when(s)))),
        ),
    n > item.sessions.length ? el('p', {}, el('a', { href: link }, `all ${n} →`)) : null,
  );
}

/** The first card: the journals' health, from `journal check` (it verifies every record, so it comes last). */
function damageCard(): HTMLElement {
  const body = el('p', { class: 'muted', id: 'health' }, 'checking the journals…');
  const card = el('section', { class: 'card attention', id: 'attention-damage' }, el('h3', {}, 'Journal damage'), body);
  get<Check>('journal/check').then(
    (c) => {
      const problems = c.journals.reduce((n, j) => n + j.problems.length, 0);
      card.classList.add(c.healthy ? 'ok' : 'alert');
      body.replaceChildren(
        el('a', { href: '#/journal' }, c.healthy ? badge('healthy') : badge('damaged')),
        ` ${c.journals.reduce((n, j) => n + j.records, 0)} records verified`,
        c.healthy ? '' : `, ${problems} problem(s): see the journal page`,
      );
    },
    (e: Error) => body.replaceChildren(badge('unknown'), ` ${e.message}`),
  );
  return card;
}

export async function overview(): Promise<HTMLElement> {
  const [counts, act, tags, journals] = await Promise.all([
    get<Counts>('overview/sessions'),
    get<Activity>('overview/activity'),
    get<Tags>('overview/tags'),
    get<Journals>('overview/journals'),
  ]);
  const a = counts.attention;
  const { recent, soon } = a.windows;
  const entries = act.hours.map((h) => ({ label: h.hour, values: h }));
  const sum = (s: string) => act.hours.reduce((n, h) => n + (h[s] ?? 0), 0);
  const quiet = act.series.every((s) => sum(s) === 0);
  const empty = counts.total === 0 && tags.cases === 0;
  return el(
    'div',
    { class: 'page overview' },
    el('div', { class: 'title' }, el('h2', {}, 'Overview'), jsonTwin('overview/sessions')),
    el('h3', { class: 'first' }, 'Needs attention'),
    el(
      'div',
      { class: 'cards attention-cards' },
      damageCard(),
      attentionCard(
        'failed',
        `Failed or abandoned, last ${recent}`,
        a.failed_recently,
        sessionsWith({ outcome: 'failed,abandoned', closed_within: recent }),
        (s) => [s.outcome ?? '', ' ', ago(s.closed_at)],
        'no session closed as failed or abandoned',
      ),
      attentionCard(
        'expired',
        'Expired, not reaped',
        a.expired_unreaped,
        sessionsWith({ expired: '1', sort: 'expires' }),
        (s) => ago(s.expires_at),
        'nothing past its expiry: crux session reap closes those',
      ),
      attentionCard(
        'expiring',
        `Expiring within ${soon}`,
        a.expiring_soon,
        sessionsWith({ expiring_within: soon, sort: 'expires' }),
        (s) => ago(s.expires_at),
        'none about to expire',
      ),
      attentionCard(
        'stranded',
        'Stranded',
        a.stranded,
        sessionsWith({ stranded: '1', sort: 'updated' }),
        (s) => ago(s.updated_at),
        'no open session is stale (archived ones are parked, not stranded)',
      ),
    ),
    empty
      ? emptyState(
          'This store is empty. Sessions appear when an agent saves its state; cases when it records what worked:',
          'crux session put my-task \'{"step":1}\'',
          'crux case record --task "renew the tls certificate" --action "certbot renew" --outcome renewed',
          'crux mcp install claude-code    # or: crux hook install claude-code',
        )
      : null,
    counts.total === 0
      ? null
      : el(
          'div',
          { class: 'cards' },
          el(
            'section',
            { class: 'card' },
            el('h3', {}, 'Sessions'),
            el('p', { class: 'big' }, el('a', { href: sessionsWith({ status: 'all' }) }, counts.total)),
          ),
          cards('By status', counts.by_status, (k) => sessionsWith({ status: k })),
          Object.keys(counts.by_freshness).length === 0
            ? null
            : cards('Open sessions by freshness', counts.by_freshness, (k) => (k === 'stale' ? sessionsWith({ stranded: '1', sort: 'updated' }) : undefined)),
        ),
    el('h3', {}, 'Activity, last 7 days (per hour)'),
    quiet
      ? emptyState('Nothing was written in the last 7 days. Puts, closes, reaps, handoffs and recorded cases show here, per hour, as agents work.')
      : [
          // A grid line at each midnight (UTC), labelled with the day.
          stackedBars(entries, act.series, (label) => (label.endsWith('T00:00:00.000Z') ? label.slice(5, 10) : undefined), SERIES_NAMES),
          el('p', { class: 'muted' }, act.series.map((s) => `${SERIES_NAMES[s] ?? s} ${sum(s)}`).join(' · ')),
        ],
    el('h3', {}, `Success rate by tag (${tags.cases} cases)`),
    tags.tags.length === 0
      ? emptyState(
          'No cases yet. An agent records what it tried and how it went; the rate per tag shows here:',
          'crux case record --task "…" --action "…" --outcome "…" --tag deploy',
        )
      : rateBars(tags.tags.map((t) => ({ label: t.tag, rate: t.success_rate, note: `${Math.round(t.success_rate * 100)}% of ${t.cases}` }))),
    el('h3', {}, 'Journals'),
    el('p', { class: 'muted' }, `${journals.store === 'postgres' ? 'PostgreSQL' : 'data directory'} ${journals.location}`),
    table(
      ['journal', 'size', 'last write'],
      journals.journals.map((j) => [j.name, bytes(j.bytes), j.modified_at === null ? '-' : ago(j.modified_at, 'browser')]),
    ),
  );
}
