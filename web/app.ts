// The dashboard's entry point: a hash router over the pages, re-rendered when the server says a journal changed.
import { el, show } from './dom';
import { overview } from './pages/overview';
import { session, sessions } from './pages/sessions';
import { casePage, cases } from './pages/cases';
import { handoffs } from './pages/handoffs';
import { journal } from './pages/journal';

type Render = () => Promise<HTMLElement>;

function route(hash: string): { page: string; render: Render } {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?');
  const params = new URLSearchParams(query);
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  // A session's page: #/session/<agent>/<id>, or #/sessions/<agent>/<id> as its JSON twin's path spells it.
  if ((parts[0] === 'session' || parts[0] === 'sessions') && parts.length === 3) return { page: 'sessions', render: () => session(parts[1]!, parts[2]!) };
  if (parts[0] === 'cases' && parts.length === 2) return { page: 'cases', render: () => casePage(parts[1]!) };
  if (parts[0] === 'sessions') return { page: 'sessions', render: () => sessions(params) };
  if (parts[0] === 'cases') return { page: 'cases', render: () => cases(params) };
  if (parts[0] === 'handoffs') return { page: 'handoffs', render: handoffs };
  if (parts[0] === 'journal') return { page: 'journal', render: journal };
  return { page: 'overview', render: overview };
}

const main = document.getElementById('main')!;
let generation = 0;

/** Renders the page the address names; a slower render of an older address never overwrites a newer one. */
async function render(): Promise<void> {
  const mine = ++generation;
  const { page, render: make } = route(location.hash);
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('current', a.getAttribute('data-page') === page);
  document.body.dataset.page = page;
  try {
    const node = await make();
    if (mine !== generation) return;
    // A live refresh keeps what the reader had opened (a picked version) only by re-picking: keep it simple.
    show(main, node);
    document.body.dataset.rendered = String(mine);
  } catch (error) {
    if (mine === generation) show(main, el('p', { class: 'error' }, (error as Error).message));
  }
}

let refreshTimer: number | undefined;
function live(): void {
  const badge = document.getElementById('live')!;
  const source = new EventSource('/api/events');
  source.addEventListener('ready', () => {
    badge.textContent = '● live';
    badge.className = 'live on';
  });
  source.addEventListener('changed', (event) => {
    const { journal: name } = JSON.parse((event as MessageEvent).data) as { journal: string };
    badge.textContent = `● ${name} changed`;
    document.body.dataset.changed = name;
    // A burst of writes is one refresh; a page with a version open stays as it is until the reader moves on.
    if (document.querySelector('.timeline li.picked') !== null) return;
    clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(() => void render(), 150);
  });
  source.onerror = () => {
    badge.textContent = '○ reconnecting';
    badge.className = 'live off';
  };
}

window.addEventListener('hashchange', () => void render());
void render();
live();
