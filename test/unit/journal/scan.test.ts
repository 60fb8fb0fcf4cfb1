import { describe, expect, it } from 'vitest';
import { scanJournal } from '../../../src/journal/codec/scan';
import { EMPTY_HEAD, encodeRecords } from '../../../src/journal/codec/record';
import { ChainVerifier } from '../../../src/journal/codec/verify';
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
    expect(result.tornTail).toEqual({ offset: Buffer.byteLength(text), length: 20, line: 4 });
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

  describe('batches', () => {
    const TS = '2026-11-29T21:00:00.000Z';
    /** Three single records, then a batch of four (values 4–7), then one more single record. */
    function batched() {
      const one = encodeRecords(EMPTY_HEAD, puts(3), TS);
      const batch = encodeRecords(one.head, puts(4, 4), TS, { batch: true });
      const after = encodeRecords(batch.head, puts(1, 8), TS);
      return { before: one.text, batch: batch.text, after: after.text, heads: [one.head, batch.head, after.head] };
    }

    it('folds a complete batch like any records', () => {
      const j = batched();
      const { applied, problems, result } = scan(j.before + j.batch + j.after);
      expect(applied).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(problems).toEqual([]);
      expect(result.head).toEqual(j.heads[2]);
    });

    it('folds none of a batch cut off at any point: it is the torn tail, and the head is the one before it', () => {
      const j = batched();
      const start = Buffer.byteLength(j.before);
      const batchBytes = Buffer.byteLength(j.batch);
      for (let cut = 1; cut < batchBytes; cut++) {
        const text = Buffer.concat([Buffer.from(j.before), Buffer.from(j.batch).subarray(0, cut)]);
        const { applied, result, problems } = scan(text);
        expect(applied, `cut ${cut}`).toEqual([1, 2, 3]);
        expect(result.tornTail, `cut ${cut}`).toMatchObject({ offset: start, length: cut, line: 4 });
        expect(result.head).toEqual(j.heads[0]);
        expect(result.records).toBe(3);
        expect(problems).toHaveLength(1);
        expect(problems[0]).toMatch(/^4: torn tail/);
      }
      const whole = lines(j.batch);
      const { problems } = scan(`${j.before + whole.slice(0, 2).join('\n')}\n${whole[2]!.slice(0, 9)}`);
      expect(problems).toEqual(['4: torn tail (an incomplete batch: 2 of 4 records, then 9 bytes without a final newline)']);
    });

    it('folds the other records of a complete batch with a damaged line, reporting that line', () => {
      const j = batched();
      const l = lines(j.batch);
      l[1] = l[1]!.replace('"value":5', '"value":50');
      const { applied, problems } = scan(`${j.before + l.join('\n')}\n${j.after}`);
      expect(applied).toEqual([1, 2, 3, 4, 6, 7, 8]);
      expect(problems).toEqual(['5: hash mismatch']);
    });

    it('folds none of a batch that another write interrupted, and reports it once over its lines', () => {
      const j = batched();
      const l = lines(j.batch);
      // Two of the four records, then a record continuing the chain from the journal before the batch.
      const other = encodeRecords(j.heads[0]!, puts(1, 9), TS).text;
      const { applied, result } = scan(`${j.before + l.slice(0, 2).join('\n')}\n${other}`);
      expect(applied).toEqual([1, 2, 3, 9]);
      const incomplete = result.problems.find((p) => p.reason.startsWith('incomplete batch'))!;
      expect(incomplete).toMatchObject({ line: 4, skipped: true, length: Buffer.byteLength(`${l[0]}\n${l[1]}`) });
      expect(incomplete.reason).toBe('incomplete batch (2 of 4 records, broken at line 6): a write that never completed');
    });

    it('reads old journals without batch marks record by record', () => {
      const { applied, problems } = scan(journalText(6));
      expect(applied).toEqual([1, 2, 3, 4, 5, 6]);
      expect(problems).toEqual([]);
    });
  });
});

describe('ChainVerifier keeping nothing of a record (journal copy verifies so: a batch of a million holds numbers)', () => {
  const verdict = (text: string, withSink: boolean) => {
    const verifier = withSink
      ? new ChainVerifier(VOCAB, () => {})
      : new ChainVerifier(
          VOCAB,
          () => {},
          undefined,
          false,
          () => 0,
        );
    let offset = 0;
    for (const [i, line] of text.split('\n').slice(0, -1).entries()) {
      verifier.visit(line, { line: i + 1, offset, length: Buffer.byteLength(line) });
      offset += Buffer.byteLength(line) + 1;
    }
    const { records, problems, head, open } = verifier.finish();
    return { records, head, open: open && { want: open.want, seen: open.seen }, problems: problems.map((p) => `${p.line}: ${p.reason}`) };
  };
  const single = encodeRecords(EMPTY_HEAD, puts(2), '2026-11-29T21:00:00.000Z');
  const batch = encodeRecords(single.head, [...puts(3, 3), { ev: 'item.unknown', data: {} }, ...puts(2, 6)], '2026-11-29T21:00:00.000Z', { batch: true });
  const after = encodeRecords(batch.head, puts(1, 8), '2026-11-29T21:00:00.000Z');

  it.each([
    ['a complete batch between single records', single.text + batch.text + after.text],
    ['a batch cut short at the end', `${single.text + lines(batch.text).slice(0, 4).join('\n')}\n`],
    ['a batch another write interrupted', `${single.text + lines(batch.text).slice(0, 2).join('\n')}\n${after.text}`],
    [
      'a damaged line inside a batch',
      single.text +
        lines(batch.text)
          .map((l, i) => (i === 1 ? l.replace('"k4"', '"kX"') : l))
          .join('\n') +
        '\n',
    ],
  ])('counts, heads and problems as when keeping the records: %s', (_, text) => {
    const counted = verdict(text, false);
    expect(counted).toEqual(verdict(text, true));
    expect(counted.records).toBeGreaterThan(0);
  });
});
