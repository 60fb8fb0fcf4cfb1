// Reading a transcript file: streamed in chunks (lines and UTF-8 sequences across chunk boundaries), a torn
// or damaged line refused, the size bound kept, and the last prompt found from the end.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { foldTranscript, lastPromptOf, lastPromptsOf } from '../../../src/cli/hook/transcript-file';
import { tempDir } from '../../helpers/cli';

const prompt = (i: number, text: string) => JSON.stringify({ type: 'user', uuid: `u${i}`, message: { role: 'user', content: text } });
const result = (i: number, size: number) =>
  JSON.stringify({
    type: 'user',
    uuid: `r${i}`,
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'é✓'.repeat(size) }] },
  });
const bash = (i: number) =>
  JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: `step ${i}` } }] } });
function file(lines: string[], end = '\n'): string {
  const path = join(tempDir(), 't.jsonl');
  fs.writeFileSync(path, lines.join('\n') + end);
  return path;
}

describe('foldTranscript', () => {
  it('folds lines that cross 1 MiB chunks, multi-byte characters split between them included', () => {
    const lines: string[] = [];
    for (let i = 0; i < 12; i++) lines.push(prompt(i, `prompt ${i} ✓`), bash(i), result(i, 100_000 + i));
    const path = file(lines);
    expect(fs.statSync(path).size).toBeGreaterThan(3 * 1024 * 1024);
    // The file is cut inside a character at some chunk boundary (a UTF-8 continuation byte there).
    const bytes = fs.readFileSync(path);
    expect([1, 2, 3].some((k) => (bytes[k * 1024 * 1024]! & 0xc0) === 0x80)).toBe(true);
    const read = foldTranscript(path, 64 << 20);
    expect('fold' in read && read.fold.turns.map((t) => [t.prompt, t.results, t.commands])).toEqual(
      lines.filter((_, i) => i % 3 === 0).map((_, i) => [`prompt ${i} ✓`, 1, [`step ${i}`]]),
    );
    expect(foldTranscript(path, 1024)).toEqual({ refused: expect.stringMatching(/ is \d+ bytes, over the limit of 1024 \(CRUX_MAX_TRANSCRIPT_BYTES\)$/) });
  });

  it('a last line without its newline is read when whole, refused when torn; a damaged line is refused by number', () => {
    expect('fold' in foldTranscript(file([prompt(1, 'a'), prompt(2, 'b')], ''), 1 << 20)).toBe(true);
    expect(foldTranscript(file([prompt(1, 'a'), prompt(2, 'b').slice(0, 20)], ''), 1 << 20)).toEqual({
      refused: expect.stringMatching(/ends in a partial line \(line 2\)$/),
    });
    expect(foldTranscript(file([prompt(1, 'a'), '{"type":', prompt(2, 'b')]), 1 << 20)).toEqual({
      refused: expect.stringMatching(/^line 2 of the transcript .* is not JSON$/),
    });
    expect('fold' in foldTranscript(file([prompt(1, 'a'), '', '  ', prompt(2, 'b')]), 1 << 20)).toBe(true);
    expect(foldTranscript(join(tempDir(), 'none.jsonl'), 1 << 20)).toEqual({ refused: expect.stringMatching(/^no transcript at /) });
  });
});

describe('lastPromptOf', () => {
  it('finds the last prompt from the end, across 64 KiB chunks, within the last MiB', () => {
    expect(lastPromptOf(file([prompt(1, 'first'), prompt(2, 'second ✓'), bash(2), result(2, 10)]))).toEqual({ text: 'second ✓', uuid: 'u2' });
    // The last prompt sits before 300 KB of results: found by reading back chunk by chunk.
    const far = [prompt(1, 'first'), prompt(2, 'the one'), ...Array.from({ length: 30 }, (_, i) => result(i, 5_000))];
    expect(lastPromptOf(file(far))).toEqual({ text: 'the one', uuid: 'u2' });
    // Beyond the last MiB nothing is looked for; a torn tail and a missing file are no prompt, not an error.
    expect(lastPromptOf(file([prompt(1, 'too far'), ...Array.from({ length: 120 }, (_, i) => result(i, 5_000))]))).toBeUndefined();
    expect(lastPromptOf(file([prompt(1, 'whole'), prompt(2, 'torn').slice(0, 30)], ''))).toEqual({ text: 'whole', uuid: 'u1' });
    expect(lastPromptOf(join(tempDir(), 'none.jsonl'))).toBeUndefined();
    // The last two, newest first, and whether the whole file was seen (then there are no others).
    expect(lastPromptsOf(file([prompt(1, 'a'), bash(1), prompt(2, 'b'), prompt(3, 'c')]), 2)).toEqual({
      prompts: [
        { text: 'c', uuid: 'u3' },
        { text: 'b', uuid: 'u2' },
      ],
      whole: false,
    });
    expect(lastPromptsOf(file([prompt(1, 'only'), bash(1)]), 2)).toEqual({ prompts: [{ text: 'only', uuid: 'u1' }], whole: true });
    expect(lastPromptsOf(file([prompt(1, 'far'), ...Array.from({ length: 120 }, (_, i) => result(i, 5_000))]), 2)).toEqual({ prompts: [], whole: false });
  });
});
