// Charts as inline SVG built node by node (no library, no markup strings): stacked bars per hour, and bars of a
// rate. Every label is a text node.
import { el, svg, type Child } from './dom';

export interface Stack {
  readonly label: string;
  readonly values: Record<string, number>;
}

/** The axis' labels: whole numbers only, each once (a maximum of 1 is 0 and 1, never 0, 1, 1). */
export function axisTicks(max: number): number[] {
  const top = Math.max(1, Math.ceil(max));
  return [...new Set([0, Math.round(top / 2), top])].filter((v) => v <= top);
}

/** A series' class: its colour by name, so that failures keep theirs whatever the series around them. */
const seriesClass = (s: string) => `c-${s.replace(/[^a-z_-]/g, '')}`;

/**
 * Stacked bars, one per entry, `series` bottom to top, each in its series' colour (see app.css: failures red);
 * a grid line and a label at each entry `tick` names; a legend naming every colour.
 */
export function stackedBars(
  entries: readonly Stack[],
  series: readonly string[],
  tick: (label: string) => string | undefined,
  legendName: Record<string, string> = {},
): HTMLElement {
  const W = 840;
  const H = 200;
  const pad = { l: 34, r: 6, t: 8, b: 22 };
  const max = Math.max(1, ...entries.map((e) => series.reduce((n, s) => n + (e.values[s] ?? 0), 0)));
  const labels = axisTicks(max);
  const top = labels[labels.length - 1]!;
  const bw = (W - pad.l - pad.r) / Math.max(1, entries.length);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / top);
  const bars: Child[] = [];
  entries.forEach((e, i) => {
    let base = 0;
    for (const s of series) {
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
            class: seriesClass(s),
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
  const axis = labels.map((v) => svg('text', { x: pad.l - 4, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, String(v)));
  const legend = el(
    'ul',
    { class: 'legend' },
    series.map((s) => el('li', { 'data-series': s }, el('span', { class: `swatch ${seriesClass(s)}` }), legendName[s] ?? s)),
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
