// Tables as lines: widths from a sample, fitted to the terminal, cut with …, plain columns when piped.
import { describe, expect, it } from 'vitest';
import { fitColumns, SAMPLE_ROWS, tableLines, unlessEmpty, type CellValue, type Column, type TableLayout } from '../../../src/output/table';
import { cutToWidth, displayWidth, wrapWords } from '../../../src/output/text-width';

const noPaint = (_tone: string, text: string) => text;
const render = (columns: (string | Column)[], rows: CellValue[][], layout: TableLayout) => [...tableLines(columns, rows, layout, noPaint)];
const BOX = /[│┌┐└┘├┤┬┴┼─]/;

describe('display width and cutting', () => {
  it('counts wide characters twice and combining marks not at all', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('日本')).toBe(4);
    expect(displayWidth('🎉')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
  });

  it('cuts to the width with … and never splits a wide character over the edge', () => {
    expect(cutToWidth('abcdef', 4)).toBe('abc…');
    expect(cutToWidth('abc', 3)).toBe('abc');
    expect(cutToWidth('日本語テキスト', 6)).toBe('日本…');
    expect(displayWidth(cutToWidth('日本語テキスト', 6))).toBeLessThanOrEqual(6);
  });
});

describe('tableLines', () => {
  const rows = [
    ['build-42', 'active', 'rotate the TLS certificate on every edge node before Friday'],
    ['x', 'closed', 'short'],
  ];

  it('piped: plain aligned columns, a header, one row a line, no box drawing, no trailing spaces', () => {
    const lines = render(['id', 'status', 'task'], rows, { box: false, width: undefined });
    expect(lines).toEqual([
      'id        status  task',
      'build-42  active  rotate the TLS certificate on every edge node before Friday',
      'x         closed  short',
    ]);
    for (const line of lines) expect(line).not.toMatch(BOX);
  });

  it('piped with COLUMNS: cut to fit as well', () => {
    const lines = render(['id', 'status', { title: 'task', flex: true }], rows, { box: false, width: 40 });
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(40);
    expect(lines[1]).toMatch(/^build-42  active  rotate the TLS ce.*…$/);
  });

  it('on a terminal: box-drawn within the width, free text cut first with …', () => {
    const lines = render(['id', 'status', { title: 'task', flex: true }], rows, { box: true, width: 40 });
    expect(lines[0]).toMatch(/^┌─+┬─+┬─+┐$/);
    expect(lines.at(-1)).toMatch(/^└─+┴─+┴─+┘$/);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(40);
    expect(lines[3]).toContain('│ build-42 │');
    expect(lines[3]).toContain('…');
  });

  it('uses the whole width when it fits, no wider than needed', () => {
    const lines = render(['a', 'b'], [['1', '2']], { box: true, width: 200 });
    expect(lines).toEqual(['┌───┬───┐', '│ a │ b │', '├───┼───┤', '│ 1 │ 2 │', '└───┴───┘']);
  });

  it('leaves out optional columns (whole, never mid-row) before cutting ids', () => {
    const id = 'c_5f0c2a9e1b7d4c3a2f1e0d9c';
    const lines = render(['id', { title: 'task', flex: true }, { title: 'reused', optional: true }], [[id, 'a task of some length here', '3']], { box: true, width: 45 });
    expect(lines.join('\n')).not.toContain('reused');
    expect(lines[3]).toContain(id);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(45);
  });

  it('cuts every column as a last resort, so even a narrow terminal gets no wrapped line', () => {
    const wide = Array.from({ length: 6 }, (_, i) => `column-${i}-with-a-long-value`);
    const lines = render(wide.map((_, i) => `h${i}`), [wide], { box: true, width: 50 });
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(50);
  });

  it('escapes control characters and flattens newlines in cells', () => {
    const lines = render(['task'], [['red \u001b[31mtext\nnext \u202e']], { box: false, width: undefined });
    expect(lines[1]).toBe('red \\x1b[31mtext next \\u202e');
  });

  it('writes - for an empty cell when piped, so awk fields do not shift', () => {
    expect(render(['a', 'b', 'c'], [['1', '', '3']], { box: false, width: undefined })[1]).toBe('1  -  3');
  });

  it('paints the text only: each colour is reset before the padding and the line end', () => {
    const paint = (_tone: string, text: string) => `<${text}>`;
    const lines = [...tableLines(['status', 'n'], [[{ text: 'ok', tone: 'good' }, '1']], { box: false, width: undefined }, paint)];
    expect(lines).toEqual(['<status>  <n>', '<ok>      1']);
  });

  it('streams: rows after the sample are cut to the widths the sample gave, and are read lazily', () => {
    let produced = 0;
    function* many(): Generator<CellValue[]> {
      for (let i = 0; i < SAMPLE_ROWS + 10; i++) {
        produced += 1;
        yield [String(i), i === SAMPLE_ROWS + 5 ? 'x'.repeat(100) : 'short'];
      }
    }
    const lines = tableLines(['n', { title: 'text', flex: true }], many(), { box: true, width: 30 }, noPaint);
    const first = lines.next();
    expect(first.done).toBe(false);
    expect(produced).toBe(SAMPLE_ROWS);
    const rest = [...lines];
    expect(produced).toBe(SAMPLE_ROWS + 10);
    for (const line of rest) expect(displayWidth(line)).toBeLessThanOrEqual(30);
    expect(rest.find((l) => l.includes('xxx'))).toMatch(/…/);
  });

  it('unlessEmpty tells an empty list without losing the first row', () => {
    expect(unlessEmpty([])).toBeUndefined();
    expect([...unlessEmpty([1, 2, 3])!]).toEqual([1, 2, 3]);
  });

  it('fitColumns keeps natural widths when there is room or no limit', () => {
    expect(fitColumns([3, 4], [{ title: 'a' }, { title: 'b' }], { box: false, width: undefined })).toEqual({ shown: [0, 1], widths: [3, 4] });
    expect(fitColumns([3, 4], [{ title: 'a' }, { title: 'b' }], { box: true, width: 80 })).toEqual({ shown: [0, 1], widths: [3, 4] });
  });
});

describe('wrapWords', () => {
  it('breaks prose at spaces within the width, indenting the lines after the first; colour takes no width', () => {
    const text = 'lock        free (kernel-held: a dead holder frees it at once, so it is never stale)';
    const lines = wrapWords(text, 40, 12);
    expect(lines).toEqual(['lock        free (kernel-held: a dead', '            holder frees it at once, so', '            it is never stale)']);
    expect(wrapWords('\u001b[1mab\u001b[22m cd', 5, 0)).toEqual(['\u001b[1mab\u001b[22m cd']);
    expect(wrapWords(text, undefined, 12)).toEqual([text]);
    expect(wrapWords('a /a/very/long/path/that/cannot/break b', 10, 2)).toEqual(['a', '  /a/very/long/path/that/cannot/break', '  b']);
  });
});
