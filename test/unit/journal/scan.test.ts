import { describe, expect, it } from 'vitest';
import { scanJournal } from '../../../src/journal/scan';
import { EMPTY_HEAD, encodeRecords } from '../../../src/journal/record';
import { journalText, lines, puts, VOCAB, writeJournal } from './fixtures';

function scan(text: string | Buffer) {
  const { path } = writeJournal(text);
  const applied: number[] = [];
  const result = scanJournal(path, VOCAB, (record) => applied.push(record.data.value));
  return { result, applied, problems: result.problems.map((p) => `${p.line}: ${p.reason}`) };
}

describe('scanJournal', () => {
  it('replays a healthy journal with no problems', () => {
    const { result, applied, problems } = scan(journalText(5));
    expect(applied).toEqual([1, 2, 3, 4, 5]);
    expect(problems).toEqual([]);
    expect(result).toMatchObject({ exists: true, records: 5, lines: 5, head: { seq: 5 } });
  });

  it('treats a missing file as an empty journal', () => {
    const result = scanJournal('/nonexistent/crux/items.jsonl', VOCAB, () => {});
    expect(result).toMatchObject({ exists: false, records: 0, problems: [] });
  });

  it('reports a torn tail at its line and applies everything before it', () => {
    const text = journalText(3);
    const { result, applied, problems } = scan(text + text.split('\n')[0]!.slice(0, 20));
    expect(applied).toEqual([1, 2, 3]);
    expect(problems).toEqual(['4: torn tail (20 bytes without a final newline)']);
    expect(result.tornTail).toEqual({ offset: Buffer.byteLength(text), length: 20 });
  });

  it('reports a garbled line once and still loads the rest', () => {
    const l = lines(journalText(4));
    l[1] = 'garbage{{{';
    const { applied, problems } = scan(`${l.join('\n')}\n`);
    expect(applied).toEqual([1, 3, 4]);
    expect(problems).toEqual(['2: bad JSON']);
  });

  it('reports a flipped character inside valid JSON as a hash mismatch at its line', () => {
    const l = lines(journalText(4));
    l[2] = l[2]!.replace('"value":3', '"value":8');
    const { applied, problems } = scan(`${l.join('\n')}\n`);
    expect(applied).toEqual([1, 2, 4]);
    expect(problems).toEqual(['3: hash mismatch']);
  });

  it('reports a deleted line as a chain break and sequence gap on the line after it', () => {
    const l = lines(journalText(4));
    l.splice(1, 1);
    const { applied, problems } = scan(`${l.join('\n')}\n`);
    expect(applied).toEqual([1, 3, 4]);
    expect(problems).toEqual(['2: chain break; sequence gap (expected 2, found 3)']);
  });

  it('reports reordered lines', () => {
    const l = lines(journalText(4));
    [l[1], l[2]] = [l[2]!, l[1]!];
    const { problems } = scan(`${l.join('\n')}\n`);
    expect(problems).toEqual([
      '2: chain break; sequence gap (expected 2, found 3)',
      '3: chain break; sequence gap (expected 4, found 2)',
      '4: chain break; sequence gap (expected 3, found 4)',
    ]);
  });

  it('reports a journal whose first lines were cut off', () => {
    const l = lines(journalText(3));
    const { problems } = scan(`${l.slice(1).join('\n')}\n`);
    expect(problems).toEqual(['1: chain break (the journal does not start at the beginning of its chain)']);
  });

  it('reports unknown events and does not apply them', () => {
    const text = encodeRecords(EMPTY_HEAD, [...puts(1), { ev: 'item.zap', data: {} }, ...puts(1, 2)], '2026-11-29T21:00:00.000Z').text;
    const { applied, problems } = scan(text);
    expect(applied).toEqual([1, 2]);
    expect(problems).toEqual(['2: unknown event "item.zap"']);
  });

  it('reports invalid UTF-8 and NUL runs by name', () => {
    const l = lines(journalText(3));
    const bad = Buffer.concat([Buffer.from(`${l[0]}\n`), Buffer.from([0xff, 0xfe, 0x22, 0x0a]), Buffer.alloc(16, 0), Buffer.from(`\n${l[1]}\n`)]);
    const { problems } = scan(bad);
    expect(problems[0]).toBe('2: bad JSON');
    expect(problems[1]).toBe('3: bad JSON (NUL bytes)');
  });
});
