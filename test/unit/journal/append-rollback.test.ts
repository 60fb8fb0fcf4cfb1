// A failed append takes back its own bytes and never another writer's (SPEC §3: a writer never truncates or
// overwrites bytes it did not write).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rollBack } from '../../../src/journal/dir/append';
import { tempDir } from '../../helpers/cli';

function withFile(content: string, fn: (fd: number, path: string) => string | undefined): { left: string | undefined; after: string | null } {
  const path = join(tempDir(), 'j.jsonl');
  fs.writeFileSync(path, content);
  const fd = fs.openSync(path, 'r+');
  try {
    const left = fn(fd, path);
    return { left, after: fs.existsSync(path) ? fs.readFileSync(path, 'utf8') : null };
  } finally {
    fs.closeSync(fd);
  }
}

describe('append roll-back', () => {
  const mine = Buffer.from('{"mine":1}\n');
  it('cuts a partial write of its own back to the size before it', () => {
    expect(withFile('{"a":1}\n{"min', (fd, p) => rollBack(fd, p, false, 8, mine))).toEqual({ left: undefined, after: '{"a":1}\n' });
    expect(withFile('{"a":1}\n{"mine":1}\n', (fd, p) => rollBack(fd, p, false, 8, mine))).toEqual({ left: undefined, after: '{"a":1}\n' });
    expect(withFile('{"a":1}\n', (fd, p) => rollBack(fd, p, false, 8, mine))).toEqual({ left: undefined, after: '{"a":1}\n' });
  });

  it("leaves bytes that are not its own: another writer's line after or instead of its write", () => {
    const other = withFile('{"a":1}\n{"other":2}\n', (fd, p) => rollBack(fd, p, false, 8, mine));
    expect(other.after).toBe('{"a":1}\n{"other":2}\n');
    expect(other.left).toMatch(/left the file as it is/);
    const after = withFile('{"a":1}\n{"mine":1}\n{"b":2}\n', (fd, p) => rollBack(fd, p, false, 8, mine));
    expect(after.after).toBe('{"a":1}\n{"mine":1}\n{"b":2}\n');
    expect(after.left).toMatch(/left the file as it is/);
    const shorter = withFile('{"a"', (fd, p) => rollBack(fd, p, false, 8, mine));
    expect(shorter.after).toBe('{"a"');
    expect(shorter.left).toBeDefined();
  });

  it('removes a file it created only while it holds nothing but its own bytes', () => {
    expect(withFile('{"mi', (fd, p) => rollBack(fd, p, true, 0, mine))).toEqual({ left: undefined, after: null });
    const taken = withFile('{"other":2}\n', (fd, p) => rollBack(fd, p, true, 0, mine));
    expect(taken.after).toBe('{"other":2}\n');
  });
});
