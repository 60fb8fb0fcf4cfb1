import { describe, expect, it } from 'vitest';
import { MAX_TAGS, MAX_TEXT_BYTES, parseCaseDraft, parseImportObject, parseRecordObject, parseReward } from '../../../src/domain/case/case';
import { parseImportLines } from '../../../src/domain/case/import-lines';
import type { CaseId } from '../../../src/shared/ids';
import { CruxError } from '../../../src/shared/errors';

const NOW = Date.parse('2026-11-29T21:00:00Z');
let counter = 0;
const nextId = () => `c_new${++counter}` as CaseId;

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    if (error instanceof CruxError) return `${error.exitCode}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseCaseDraft', () => {
  it('defaults success to true, reward to 1, tags to none, optional text to null', () => {
    expect(parseCaseDraft({ task: 't', action: 'a', outcome: 'o' })).toEqual({
      task: 't',
      context: null,
      action: 'a',
      outcome: 'o',
      success: true,
      reward: 1,
      tags: [],
      source_receipt: null,
    });
  });

  it('scrubs credentials from URLs in every text field', () => {
    const url = 'see https://user:tok3n@git.example.com/x and ftp://a@b.c';
    const draft = parseCaseDraft({ task: url, action: url, outcome: url, context: url, tags: [url], source_receipt: url });
    for (const value of [draft.task, draft.action, draft.outcome, draft.context, draft.tags[0], draft.source_receipt]) {
      expect(value).toBe('see https://git.example.com/x and ftp://b.c');
    }
  });

  it('requires task, action and outcome, non-empty', () => {
    expect(refusal(() => parseCaseDraft({ action: 'a', outcome: 'o' }))).toBe('5: task is required');
    expect(refusal(() => parseCaseDraft({ task: '  ', action: 'a', outcome: 'o' }))).toBe('5: task must not be empty');
    expect(refusal(() => parseCaseDraft({ task: 't', action: 3, outcome: 'o' }))).toBe('5: action must be a string, not a number');
  });

  it(`refuses a text field over ${MAX_TEXT_BYTES} bytes, counting UTF-8 bytes`, () => {
    expect(parseCaseDraft({ task: 'x'.repeat(MAX_TEXT_BYTES), action: 'a', outcome: 'o' }).task.length).toBe(MAX_TEXT_BYTES);
    expect(refusal(() => parseCaseDraft({ task: 't', action: 'a', outcome: 'é'.repeat(MAX_TEXT_BYTES / 2 + 1) }))).toBe(
      `5: outcome is ${MAX_TEXT_BYTES + 2} bytes, over the limit of ${MAX_TEXT_BYTES} bytes`,
    );
    expect(refusal(() => parseCaseDraft({ task: 't', action: 'a', outcome: 'o', tags: Array(MAX_TAGS + 1).fill('x') }))).toMatch(/^5: 65 tags/);
  });

  it('refuses lone surrogates', () => {
    expect(refusal(() => parseCaseDraft({ task: 'bad \ud800', action: 'a', outcome: 'o' }))).toMatch(/^5: task is not well-formed/);
  });
});

describe('parseReward', () => {
  it('clamps to [0, 1]', () => {
    expect(parseReward('0.25')).toBe(0.25);
    expect(parseReward('1.5')).toBe(1);
    expect(parseReward('-3')).toBe(0);
    expect(Object.is(parseReward(-0), 0)).toBe(true);
    expect(parseReward(' .5 ')).toBe(0.5);
    expect(parseReward('2e-1')).toBe(0.2);
  });

  it('refuses what is not a finite number', () => {
    for (const bad of ['abc', '', '0x1', 'NaN', 'Infinity', '1,5', true, null]) expect(refusal(() => parseReward(bad))).toMatch(/^5: reward must be/);
    expect(refusal(() => parseReward(Number('1e400')))).toMatch(/^5: reward must be a finite number/);
  });
});

describe('parseRecordObject / parseImportObject', () => {
  it('refuses unknown fields and non-objects', () => {
    expect(refusal(() => parseRecordObject({ task: 't', action: 'a', outcome: 'o', outcom: 'x' }))).toMatch(/^5: the case has unknown field "outcom"/);
    expect(refusal(() => parseRecordObject([1]))).toBe('5: the case must be a JSON object, not an array');
    expect(refusal(() => parseRecordObject({ task: 't', action: 'a', outcome: 'o', case_id: 'c_1' }))).toMatch(/unknown field "case_id"/);
    expect(refusal(() => parseRecordObject({ task: 't', action: 'a', outcome: 'o', success: 'yes' }))).toBe('5: success must be true or false, not a string');
  });

  it('imports a bare case with a new id, the current time and no reuse', () => {
    expect(parseImportObject({ task: 't', action: 'a', outcome: 'o' }, () => 'c_fresh' as CaseId, NOW)).toMatchObject({
      case_id: 'c_fresh',
      created_at: '2026-11-29T21:00:00.000Z',
      times_reused: 0,
      success: true,
      reward: 1,
    });
  });

  it('keeps a given id, time (normalized to UTC) and reuse count', () => {
    const c = parseImportObject(
      { case_id: 'c_old', task: 't', action: 'a', outcome: 'o', created_at: '2026-01-01T01:00:00+01:00', times_reused: 4, reward: 7 },
      nextId,
      NOW,
    );
    expect(c).toMatchObject({ case_id: 'c_old', created_at: '2026-01-01T00:00:00.000Z', times_reused: 4, reward: 1 });
    expect(refusal(() => parseImportObject({ task: 't', action: 'a', outcome: 'o', times_reused: -1 }, nextId, NOW))).toMatch(/^5: times_reused/);
    expect(refusal(() => parseImportObject({ task: 't', action: 'a', outcome: 'o', created_at: 'yesterday' }, nextId, NOW))).toMatch(/^5: created_at/);
    expect(refusal(() => parseImportObject({ case_id: 'a::b', task: 't', action: 'a', outcome: 'o' }, nextId, NOW))).toMatch(/^5: case id/);
  });
});

describe('parseImportLines', () => {
  const lines = (...l: string[]) => Buffer.from(l.join('\n'));
  const ok = '{"task":"t","action":"a","outcome":"o"}';

  it('parses every line, skipping blank ones, with or without a final newline or \\r', () => {
    expect(parseImportLines(lines(ok, '', `${ok}\r`, '  ', ok), nextId, NOW)).toHaveLength(3);
    expect(parseImportLines(Buffer.from(''), nextId, NOW)).toEqual([]);
  });

  it('names the first bad line', () => {
    expect(refusal(() => parseImportLines(lines(ok, ok, '{"task":"t"', ok), nextId, NOW))).toMatch(/^5: line 3: not valid JSON/);
    expect(refusal(() => parseImportLines(lines(ok, '{"task":"t","action":"a"}'), nextId, NOW))).toBe('5: line 2: outcome is required');
    expect(refusal(() => parseImportLines(lines(ok, '[]'), nextId, NOW))).toBe('5: line 2: the case must be a JSON object, not an array');
    expect(refusal(() => parseImportLines(Buffer.concat([Buffer.from(`${ok}\n`), Buffer.from([0xff, 0xfe, 0x0a])]), nextId, NOW))).toBe(
      '5: line 2: not valid UTF-8',
    );
  });

  it('refuses the same case_id twice', () => {
    const withId = '{"case_id":"c_1","task":"t","action":"a","outcome":"o"}';
    expect(refusal(() => parseImportLines(lines(withId, ok, withId), nextId, NOW))).toBe('5: line 3: case_id "c_1" already appears on line 1');
  });

  it('reports the bytes read after each case, up to the whole input (progress)', () => {
    const input = lines(ok, '', ok, ok);
    const heard: [number, number][] = [];
    parseImportLines(input, nextId, NOW, (done, total) => heard.push([done, total]));
    expect(heard).toEqual([
      [ok.length + 1, input.length],
      [2 * ok.length + 3, input.length],
      [input.length, input.length],
    ]);
  });
});
