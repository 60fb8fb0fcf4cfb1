// Charts as inline SVG built node by node (no library, no markup strings): stacked bars per hour, and bars of a
// rate. Every label is a text node.
import { el, svg, type Child } from './dom';

export interface Stack {
  readonly label: string;
  readonly values: Record<string, number>;
}

/** Stacked bars, one per entry, `series` bottom to top; a grid line and a label at each entry `tick` names. */
export function stackedBars(entries: readonly Stack[], series: readonly string[], tick: (label: string) => string | undefined): HTMLElement {
  const W = 840;
  const H = 200;
  const pad = { l: 34, r: 6, t: 8, b: 22 };
  const max = Math.max(1, ...entries.map((e) => series.reduce((n, s) => n + (e.values[s] ?? 0), 0)));
  const bw = (W - pad.l - pad.r) / Math.max(1, entries.length);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / max);
  const bars: Child[] = [];
  entries.forEach((e, i) => {
    let base = 0;
    for (const [k, s] of series.entries()) {
      const v = e.values[s] ?? 0;
      if (v === 0) continue;
      bars.push(
        svg(
          'rect',
          {
            x: (pad.l + i * bw).toFixed(2),
            y: y(base + v).toFixed(2),
            width: Math.max(1, bw - 0.6).toFixed(2),
            height: (y(base) - y(base + v)).toFixed(2),
            class: `s${k}`,
          },
          svg('title', {}, `${e.label} ${s}: ${v}`),
        ),
      );
      base += v;
    }
  });
  const ticks: Child[] = [];
  for (const [i, e] of entries.entries()) {
    const label = tick(e.label);
    if (label === undefined) continue;
    const x = pad.l + i * bw;
    ticks.push(svg('line', { x1: x, x2: x, y1: pad.t, y2: H - pad.b, class: 'grid' }), svg('text', { x: x + 2, y: H - 6, class: 'tick' }, label));
  }
  const axis = [0, max / 2, max].map((v) => svg('text', { x: pad.l - 4, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, String(Math.round(v))));
  const legend = el(
    'ul',
    { class: 'legend' },
    series.map((s, k) => el('li', {}, el('span', { class: `swatch s${k}` }), s)),
  );
  return el('figure', { class: 'chart' }, svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'activity per hour' }, ticks, axis, bars), legend);
}

export interface Rate {
  readonly label: string;
  readonly rate: number;
  readonly note: string;
}

/** One horizontal bar per entry: its rate (0 to 1) and a note beside it. */
export function rateBars(entries: readonly Rate[]): HTMLElement {
  return el(
    'div',
    { class: 'rates' },
    entries.map((e) =>
      el(
        'div',
        { class: 'rate' },
        el('span', { class: 'rate-label', title: e.label }, e.label),
        el('span', { class: 'rate-track' }, el('span', { class: 'rate-fill', style: `width:${(e.rate * 100).toFixed(1)}%` })),
        el('span', { class: 'rate-note' }, e.note),
      ),
    ),
  );
}
