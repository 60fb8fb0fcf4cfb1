import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayElements, minifyJson, objectMembers, parseJsonText, serdeIncompatibility, SERDE_MAX_DEPTH } from '../../../src/shared/json-text';

const members = (text: string) => objectMembers(text).map(({ key, raw }) => [key, raw]);
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('objectMembers and arrayElements', () => {
  it('finds each member value as written', () => {
    const text = ' { "a" : 12345678901234567890 , "s":"x\\"}]" ,"o":{"k":[1.0,{"z":-0}]},"e":1e400,"n":null, "b\\\\":"\\\\"}\n';
    expect(members(text)).toEqual([
      ['a', '12345678901234567890'],
      ['s', '"x\\"}]"'],
      ['o', '{"k":[1.0,{"z":-0}]}'],
      ['e', '1e400'],
      ['n', 'null'],
      ['b\\', '"\\\\"'],
    ]);
    expect(arrayElements('[ {"a":1} , 2 ,"]"]')).toEqual(['{"a":1}', '2', '"]"']);
    expect(arrayElements(' [ ] ')).toEqual([]);
    expect(members('{}')).toEqual([]);
  });

  it('keeps repeated keys, each where it stands (JSON.parse keeps the last)', () => {
    expect(members('{"a":1,"b":{"a":3,"a":4},"a":2}')).toEqual([
      ['a', '1'],
      ['b', '{"a":3,"a":4}'],
      ['a', '2'],
    ]);
  });

  it('round-trips any JSON value spliced into an object', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, other) => {
        const raw = JSON.stringify(value, null, 1).replace(/\n/g, ' ');
        expect(members(`{"before":${JSON.stringify(other)},"state":${raw},"after":1}`)).toEqual([
          ['before', JSON.stringify(other)],
          ['state', raw],
          ['after', '1'],
        ]);
      }),
    );
  });

  it('is not recursive: a state nested 100 000 deep does not overflow the stack', () => {
    expect(objectMembers(`{"state":${nested(100_000)}}`)[0]!.raw).toHaveLength(200_000);
    expect(minifyJson(`[ ${nested(100_000)} ]`)).toBe(`[${nested(100_000)}]`);
  });

  it.each(['', '{', '{"a":1,}', '[1 2]', '01', '"\u0001"', 'nul', '{"a":1} x', '1.', '-', '{"s":"\\x"}', '{"s":"\\u12"}', '\ufeff{}'])('refuses %j', (text) => {
    expect(() => parseJsonText(text)).toThrow();
    expect(() => minifyJson(text)).toThrow();
  });

  it('refuses a value that is not the container asked for', () => {
    expect(() => objectMembers('[1]')).toThrow(/not a JSON object/);
    expect(() => arrayElements('{}')).toThrow(/not a JSON array/);
  });
});

describe('minifyJson', () => {
  it('removes whitespace outside strings only, copying every token', () => {
    expect(minifyJson(' { "a b" : [ 1 , 2.50, 1e400, -0 ] ,\n"c":"x y \\" z" , "c" : 1} ')).toBe('{"a b":[1,2.50,1e400,-0],"c":"x y \\" z","c":1}');
  });

  it('reads and minifies strings of millions of escapes without overflowing the stack', () => {
    const long = `"${'\\n'.repeat(2_500_000)}"`;
    const escaped = `"${'a\\u00e9\\\\'.repeat(500_000)}"`;
    const text = `{"s" : ${long}, "u": ${escaped}}`;
    expect(objectMembers(text).map((m) => m.key)).toEqual(['s', 'u']);
    expect(minifyJson(text)).toBe(`{"s":${long},"u":${escaped}}`);
  });
});

describe('serdeIncompatibility: what the Crux daemon could not deserialize', () => {
  it('passes what serde_json reads', () => {
    for (const text of [
      '{"a":1,"a":2}',
      '12345678901234567890',
      '1e308',
      '-1e-400',
      '"\\ud83d\\ude00"',
      '"\\\\ud800"',
      '"😀"',
      nested(SERDE_MAX_DEPTH),
      '{"x":"1e400"}',
    ]) {
      expect(serdeIncompatibility(text), text).toBeUndefined();
    }
  });

  it('names numbers out of f64 range, lone surrogate escapes and nesting past 127', () => {
    expect(serdeIncompatibility('{"n":1e400}')).toMatch(/number 1e400 is out of the range of an f64/);
    expect(serdeIncompatibility('[-1E+309]')).toMatch(/-1E\+309/);
    expect(serdeIncompatibility(`[1${'0'.repeat(400)}]`)).toMatch(/out of the range/);
    expect(serdeIncompatibility('"a\\ud800"')).toMatch(/lone surrogate escape \\ud800/);
    expect(serdeIncompatibility('"\\udc00\\ud800"')).toMatch(/\\udc00/);
    expect(serdeIncompatibility('"\\ud800\\u0041"')).toMatch(/\\ud800/);
    expect(serdeIncompatibility('{"\\uDBFF":1}')).toMatch(/\\uDBFF/);
    expect(serdeIncompatibility(nested(SERDE_MAX_DEPTH + 1))).toMatch(/nesting deeper than 127/);
    expect(serdeIncompatibility(nested(SERDE_MAX_DEPTH), 1)).toMatch(/nesting/);
    expect(serdeIncompatibility(nested(600))).toMatch(/nesting/);
  });
});
