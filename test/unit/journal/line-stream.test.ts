// journal copy's streams: a file read as lines a chunk at a time (lines across chunks, an unterminated tail, empty
// lines, byte for byte), and a file written from lines; neither ever holds more than a chunk and a line.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { fileLines, writeNewFileFrom } from '../../../src/journal/dir/line-stream';
import { tempDir } from '../../helpers/cli';

async function collect(lines: AsyncIterable<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(Buffer.from(line).toString('latin1'));
  return out;
}

describe('fileLines', () => {
  const text = 'first\n\nsecond line that spans chunks\nx\n\u00e9t\u00e9 \u00fcber\nno newline at the end';
  const file = join(tempDir(), 'j.jsonl');
  fs.writeFileSync(file, text);
  const want = Buffer.from(text).toString('latin1').split('\n');

  it.each([1, 2, 3, 7, 64, 1 << 20])('reads every line byte for byte with %i-byte chunks', async (chunk) => {
    expect(await collect(fileLines(file, chunk))).toEqual(want);
  });

  it('yields lines a consumer may keep (not views of a buffer read over)', async () => {
    const kept: Uint8Array[] = [];
    for await (const line of fileLines(file, 4)) kept.push(line);
    expect(kept.map((l) => Buffer.from(l).toString('latin1'))).toEqual(want);
  });

  it('yields nothing for a missing file, and no empty last line after a final newline', async () => {
    expect(await collect(fileLines(join(tempDir(), 'absent.jsonl')))).toEqual([]);
    const terminated = join(tempDir(), 't.jsonl');
    fs.writeFileSync(terminated, 'a\nb\n');
    expect(await collect(fileLines(terminated, 3))).toEqual(['a', 'b']);
  });

  it('reads a chunk at a time: no read asks for more than the chunk, however large the file', async () => {
    const big = join(tempDir(), 'big.jsonl');
    fs.writeFileSync(big, `${'r'.repeat(99)}\n`.repeat(10_000));
    // crux's fs is Node's fs object (shared/fs.ts): patched here, seen there.
    const nodeFs = require('node:fs') as typeof fs;
    const reads = vi.spyOn(nodeFs, 'readSync');
    try {
      let n = 0;
      for await (const _ of fileLines(big, 4096)) n += 1;
      expect(n).toBe(10_000);
      const asked = reads.mock.calls.map((c) => (c as unknown[])[3] as number);
      expect(asked.length).toBeGreaterThanOrEqual(1_000_000 / 4096);
      expect(Math.max(...asked)).toBe(4096);
    } finally {
      reads.mockRestore();
    }
  });
});

describe('writeNewFileFrom', () => {
  it('writes each line with its newline, refuses an existing file, and leaves nothing after a failed source', async () => {
    const dir = tempDir();
    const path = join(dir, 'out.jsonl');
    async function* lines() {
      for (let i = 0; i < 30_000; i++) yield Buffer.from(`line ${i} ${'z'.repeat(40)}`);
    }
    const bytes = await writeNewFileFrom(path, lines());
    const written = fs.readFileSync(path, 'utf8');
    expect(bytes).toBe(Buffer.byteLength(written));
    expect(written.split('\n')).toHaveLength(30_001);
    expect(written.endsWith('z\n')).toBe(true);
    await expect(writeNewFileFrom(path, [Buffer.from('x')])).rejects.toMatchObject({ code: 'EEXIST' });
    const failing = join(dir, 'failing.jsonl');
    async function* broken() {
      yield Buffer.from('one');
      throw new Error('source lost');
    }
    await expect(writeNewFileFrom(failing, broken())).rejects.toThrow('source lost');
    expect(fs.existsSync(failing)).toBe(false);
  });
});
