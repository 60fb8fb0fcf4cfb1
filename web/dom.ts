// Building the page from data without ever parsing stored text as markup: every string becomes a text node (never
// innerHTML), with its control characters escaped visibly as the terminal views escape them (SPEC §8).
import { printable, printableBlock } from '../src/shared/printable';

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
export function ago(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '-';
  const ms = Date.now() - Date.parse(iso);
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

export function table(headers: string[], rows: Child[][], empty = 'nothing here'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty' }, empty);
  return el(
    'div',
    { class: 'scroll' },
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          headers.map((h) => el('th', {}, h)),
        ),
      ),
      el(
        'tbody',
        {},
        rows.map((r) =>
          el(
            'tr',
            {},
            r.map((c, i) => el('td', { 'data-label': headers[i] }, c)),
          ),
        ),
      ),
    ),
  );
}

export const badge = (value: string, kind = value) => el('span', { class: `badge b-${kind.replace(/[^a-z_-]/g, '')}` }, value);
