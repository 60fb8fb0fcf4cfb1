// Building the page from data without ever parsing stored text as markup: every string becomes a text node (never
// innerHTML), with its control characters escaped visibly as the terminal views escape them (SPEC §8).
import { printable, printableBlock } from '../src/shared/printable';
import { serverNow } from './api';

export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** A single-line field: newlines and tabs show as \n and \t too. */
export const line = (value: unknown): string => printable(String(value ?? ''));
/** A multi-line field (a state, a summary): newlines stay, every other control is escaped. */
export const block = (value: unknown): Text => document.createTextNode(printableBlock(String(value ?? '')));

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) for (const c of child) append(parent, c);
  else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(line(child)));
}

function setProps(node: Element, props: Props | undefined): void {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') node.addEventListener(key.replace(/^on/, ''), value);
    // The CSP refuses style attributes; the CSSOM is allowed.
    else if (key === 'style') (node as HTMLElement).style.cssText = String(value);
    // Attributes carry text only (never a handler): setAttribute escapes nothing into markup.
    else node.setAttribute(key, value === true ? '' : String(value));
  }
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  setProps(node, props);
  append(node, children);
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';
export function svg(tag: string, props?: Props, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  setProps(node, props);
  append(node, children);
  return node;
}

/** A link inside the page (hash routing), its parts encoded. */
export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

/** Replaces what `node` shows. */
export function show(node: Element, ...children: Child[]): void {
  node.replaceChildren();
  append(node, children);
}

/** `2026-11-29T21:00:00.000Z` as `5 min ago` (or `in 2 h`), the exact time in the title. */
export function ago(iso: string | null | undefined, clock: 'server' | 'browser' = 'server'): HTMLElement | string {
  if (!iso) return '-';
  // Stored times count from the server's clock (--now, CRUX_NOW); a file's time from the real one.
  const ms = (clock === 'server' ? serverNow() : Date.now()) - Date.parse(iso);
  if (Number.isNaN(ms)) return line(iso);
  const abs = Math.abs(ms);
  const [n, unit] =
    abs < 60_000
      ? [Math.round(abs / 1000), 's']
      : abs < 3_600_000
        ? [Math.round(abs / 60_000), 'min']
        : abs < 86_400_000
          ? [Math.round(abs / 3_600_000), 'h']
          : [Math.round(abs / 86_400_000), 'd'];
  return el('time', { datetime: iso, title: iso }, ms >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
}

export const bytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : n < 1 << 30 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / (1 << 30)).toFixed(2)} GiB`;

/** A column's header: its title, and the sort key a click orders by (a link the page builds), if any. */
export interface Header {
  readonly title: string;
  readonly sort?: string | undefined;
}

/**
 * A table in a box of its own that scrolls sideways when it must (the page never does). Headers never break
 * inside a word; a header with a sort key is a link to the same list sorted by it (`sortLink` builds it), with
 * an arrow on the column the list is sorted by.
 */
export function table(
  headers: (string | Header)[],
  rows: Child[][],
  empty: Child = 'nothing here',
  sorting?: { current: string | undefined; link: (sort: string) => string },
): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty' }, empty);
  const hs = headers.map((h) => (typeof h === 'string' ? { title: h } : h));
  const th = (h: Header) => {
    if (h.sort === undefined || sorting === undefined) return el('th', { scope: 'col' }, h.title);
    const now = sorting.current === h.sort ? 'asc' : sorting.current === `-${h.sort}` ? 'desc' : undefined;
    const next = now === 'asc' ? `-${h.sort}` : h.sort;
    return el(
      'th',
      { scope: 'col', 'aria-sort': now === 'asc' ? 'ascending' : now === 'desc' ? 'descending' : undefined },
      el('a', { href: sorting.link(next), class: 'sort', title: `sort by ${h.title}` }, h.title, now === 'asc' ? ' ▲' : now === 'desc' ? ' ▼' : ''),
    );
  };
  return el(
    'div',
    { class: 'scroll' },
    el(
      'table',
      {},
      el('thead', {}, el('tr', {}, hs.map(th))),
      el(
        'tbody',
        {},
        rows.map((r) =>
          el(
            'tr',
            {},
            r.map((c, i) => el('td', { 'data-label': hs[i]?.title }, c)),
          ),
        ),
      ),
    ),
  );
}

/**
 * Text cut to its box with `…` (CSS), whole in the title (on hover) and to a screen reader; `wide` for a
 * longer box (free text rather than an id). Stored text stays text: it goes in as a text node.
 */
export function cut(value: unknown, kind: 'id' | 'wide' = 'id'): HTMLElement {
  const whole = line(value);
  return el('span', { class: `cut cut-${kind}`, title: whole }, whole);
}

/** A link to a page, its text cut as `cut` cuts it. */
export const cutLink = (target: string, value: unknown, kind: 'id' | 'wide' = 'id'): HTMLElement => {
  const whole = line(value);
  return el('a', { href: target, class: `cut cut-${kind}`, title: whole }, whole);
};

/** The page's JSON twin: the same question at /api/… (STYLE: Datasette). */
export const jsonTwin = (path: string): HTMLElement => el('a', { href: `/api/${path}`, class: 'json', title: `this page as JSON: /api/${path}` }, 'JSON');

/** An empty state that says how to add data: a sentence, and the commands that would. */
export const emptyState = (text: string, ...commands: string[]): HTMLElement =>
  el('div', { class: 'empty-state' }, el('p', {}, text), commands.length === 0 ? null : el('pre', { class: 'how' }, block(commands.join('\n'))));

export const badge = (value: string, kind = value) => el('span', { class: `badge b-${kind.replace(/[^a-z_-]/g, '')}` }, value);
