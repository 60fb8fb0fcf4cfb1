// The id of an oversized request, read as a stream (src/cli/mcp/top-level-id.ts): only the top level counts.
import { describe, expect, it } from 'vitest';
import { TopLevelId } from '../../../src/cli/mcp/top-level-id';

const idOf = (text: string, chunk = 3) => {
  const scan = new TopLevelId();
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunk) scan.feed(bytes.subarray(i, i + chunk));
  return scan.id;
};

describe('TopLevelId', () => {
  it('finds a number or string id wherever it stands at the top level, fed in any chunks', () => {
    expect(idOf('{"jsonrpc":"2.0","id":7,"method":"x"}')).toBe(7);
    expect(idOf('{"method":"x","params":{"a":[1,{"b":2}]},"id":"req-9"}', 1)).toBe('req-9');
    expect(idOf('{ "id" : -3.5 }')).toBe(-3.5);
    expect(idOf('{"params":"a \\" \\\\ } , id","id":"x,}y"}')).toBe('x,}y');
  });

  it('ignores an "id" nested inside params, or in a string, and keys that only begin with id', () => {
    expect(idOf('{"params":{"id":1,"x":{"id":2}},"idx":3,"method":"m"}')).toBeUndefined();
    expect(idOf('{"params":{"id":1},"id":4}')).toBe(4);
    expect(idOf('{"method":"\\"id\\":5"}')).toBeUndefined();
  });

  it('leaves out what a response cannot name: null, objects, a line cut short', () => {
    expect(idOf('{"id":null,"method":"m"}')).toBeUndefined();
    expect(idOf('{"id":{"a":1},"method":"m"}')).toBeUndefined();
    expect(idOf('{"method":"m","params":"aaaa')).toBeUndefined();
    expect(idOf('[{"id":1}]')).toBeUndefined();
  });
});
