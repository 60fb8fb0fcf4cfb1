// Tables as lines: widths from a sample, fitted to the terminal, cut with …, plain columns when piped.
import { describe, expect, it } from 'vitest';
import { fitColumns, moreLine, SAMPLE_ROWS, tableLines, type CellValue, type Column, type TableLayout } from '../../../src/output/table';
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

  it('piped: tab-separated values, one header line of one-word names, nothing cut, no box drawing', () => {
    const lines = render(
      ['id', 'status', { title: 'task', flex: true }, 'state bytes', { title: 'from → to' }],
      rows.map((r) => [...r, '12', 'a → b']),
      { box: false, width: undefined },
    );
    expect(lines).toEqual([
      'id\tstatus\ttask\tstate_bytes\tfrom_to',
      'build-42\tactive\trotate the TLS certificate on every edge node before Friday\t12\ta → b',
      'x\tclosed\tshort\t12\ta → b',
    ]);
    for (const line of lines) expect(line).not.toMatch(BOX);
    expect(render([{ title: 'from → to', name: 'route' }], [], { box: false, width: undefined })).toEqual(['route']);
  });

  it('piped: --no-headers leaves the header out, on a terminal too', () => {
    expect(
      render(
        ['id', 'status'],
        rows.map((r) => r.slice(0, 2)),
        { box: false, width: undefined, headers: false },
      ),
    ).toEqual(['build-42\tactive', 'x\tclosed']);
    const boxed = render(['id'], [['a']], { box: true, width: 80, headers: false });
    expect(boxed).toEqual(['┌───┐', '│ a │', '└───┘']);
  });

  it('piped: a tab or newline inside a cell is escaped, so every row is one line of the same fields', () => {
    const lines = render(['a', 'b', 'c'], [['x\ty', 'one\ntwo\r\n', '\u001b[31mred\u202e']], { box: false, width: undefined });
    expect(lines[1]).toBe('x\\ty\tone\\ntwo\\r\\n\t\\x1b[31mred\\u202e');
    expect(lines[1]!.split('\t')).toHaveLength(3);
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
    const lines = render(['id', { title: 'task', flex: true }, { title: 'reused', optional: true }], [[id, 'a task of some length here', '3']], {
      box: true,
      width: 45,
    });
    expect(lines.join('\n')).not.toContain('reused');
    expect(lines[3]).toContain(id);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(45);
  });

  it('cuts every column as a last resort, so even a narrow terminal gets no wrapped line', () => {
    const wide = Array.from({ length: 6 }, (_, i) => `column-${i}-with-a-long-value`);
    const lines = render(
      wide.map((_, i) => `h${i}`),
      [wide],
      { box: true, width: 50 },
    );
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(50);
  });

  it('on a terminal: escapes control characters and flattens newlines in cells', () => {
    const lines = render(['task'], [['red \u001b[31mtext\nnext \u202e']], { box: true, width: 80 });
    expect(lines[3]).toBe('│ red \\x1b[31mtext next \\u202e │');
  });

  it('piped: an empty cell stays an empty field (renderers write - for a value that is not there)', () => {
    expect(render(['a', 'b', 'c'], [['1', '', '3']], { box: false, width: undefined })[1]).toBe('1\t\t3');
  });

  it('paints the text only: each colour is reset before the padding, the tab and the line end', () => {
    const paint = (_tone: string, text: string) => `<${text}>`;
    expect([...tableLines(['status', 'n'], [[{ text: 'ok', tone: 'good' }, '1']], { box: false, width: undefined }, paint)]).toEqual(['status\tn', '<ok>\t1']);
    const boxed = [...tableLines(['status'], [[{ text: 'ok', tone: 'good' }]], { box: true, width: 80 }, paint)];
    expect(boxed[3]).toBe('│ <ok>     │');
  });

  it('never cuts an id: free text first, then optional columns, then the other columns', () => {
    const uuid = 'f61400e1-2b3c-4d5e-8f90-1234567890ab';
    const columns: Column[] = [
      { title: 'id', id: true },
      { title: 'status' },
      { title: 'updated' },
      { title: 'freshness', optional: true },
      { title: 'tokens', optional: true },
      { title: 'actor', flex: true, optional: true },
    ];
    const lines = render(columns, [[uuid, 'handed_off', '5m ago', 'fresh', '1200', 'someone with a long name']], { box: true, width: 80 });
    expect(lines[3]).toContain(`│ ${uuid} │`);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(80);
    // 50 columns: everything else is cut before the id.
    const narrow = render(columns, [[uuid, 'handed_off', '5m ago', 'fresh', '1200', 'x']], { box: true, width: 50 });
    expect(narrow[3]).toContain(uuid);
    for (const line of narrow) expect(displayWidth(line)).toBeLessThanOrEqual(50);
  });

  it('leaves out a column that is empty (or -) in every row, on a terminal only', () => {
    const lines = render(
      ['id', 'actor', 'status'],
      [
        ['a', '-', 'active'],
        ['b', '', 'closed'],
      ],
      { box: true, width: 80 },
    );
    expect(lines.join('\n')).not.toContain('actor');
    expect(render(['id', 'actor'], [['a', '-']], { box: false, width: undefined })).toEqual(['id\tactor', 'a\t-']);
  });

  it('moreLine says how many more rows there are and how to see them', () => {
    expect(moreLine(50, 50, 'session')).toBeUndefined();
    expect(moreLine(50, undefined, 'session')).toBeUndefined();
    expect(moreLine(50, 51, 'session')).toBe('… 1 more session (50 of 51 shown: --limit <n> shows n, --limit 0 shows all)');
    expect(moreLine(50, 200_000, 'session')).toMatch(/^… 199950 more sessions .*--limit 0 shows all\)$/);
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
