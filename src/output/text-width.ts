// How many terminal columns a string takes, and cutting it to a width with `…`: wide (East Asian, emoji)
// characters take two, combining marks none. Input is printable text (see shared/printable.ts).

const ASCII = /^[\x20-\x7e]*$/;
// Made on first use (text beyond ASCII): creating a \p{…} class costs ~3 M instructions, and most output is ASCII.
let zeroWidth: RegExp | undefined;
let wide: RegExp | undefined;
const ZERO_WIDTH = () => (zeroWidth ??= /^[\p{Mn}\p{Me}\u200b-\u200d\u2060\ufeff\ufe00-\ufe0f]$/u);
const WIDE = () =>
  (wide ??=
    /^[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{18cff}\u{1b000}-\u{1b2ff}\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]$/u);

function charWidth(c: string): number {
  if (c.length === 1 && c >= ' ' && c <= '~') return 1;
  if (ZERO_WIDTH().test(c)) return 0;
  return WIDE().test(c) ? 2 : 1;
}

export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  let width = 0;
  for (const c of text) width += charWidth(c);
  return width;
}

/** `text` if it fits in `width` columns, else its longest prefix that fits with `…` after it. */
export function cutToWidth(text: string, width: number): string {
  if (ASCII.test(text)) return text.length <= width ? text : width <= 0 ? '' : `${text.slice(0, width - 1)}…`;
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const c of text) {
    const w = charWidth(c);
    if (used + w > width - 1) break;
    out += c;
    used += w;
  }
  return `${out}…`;
}

const SGR = /\x1b\[[0-9;]*m/g;

/**
 * Prose broken at spaces into lines of at most `width` columns (colour codes take none), the lines after the
 * first indented by `indent` spaces; a word longer than a line (a path) is kept whole on a line of its own.
 */
export function wrapWords(text: string, width: number | undefined, indent: number): string[] {
  const visible = (s: string) => displayWidth(s.replace(SGR, ''));
  if (width === undefined || visible(text) <= width) return [text];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (visible(candidate) <= width || line.trim() === '') line = candidate;
    else {
      lines.push(line);
      line = `${' '.repeat(indent)}${word}`;
    }
  }
  lines.push(line);
  return lines;
}

/** `text` followed by spaces up to `width` columns. */
export function padToWidth(text: string, width: number, textWidth = displayWidth(text)): string {
  return textWidth >= width ? text : text + ' '.repeat(width - textWidth);
}
