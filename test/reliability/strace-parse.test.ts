// The strace reader joins a call that another thread interrupted (the syscall-order test's flake).
import { describe, expect, it } from 'vitest';
import { parseStrace } from './strace';

describe('parseStrace', () => {
  it('joins <unfinished ...> and <... resumed> halves per pid, whatever comes between', () => {
    const calls = parseStrace(
      [
        '100   openat(AT_FDCWD, "/d/sessions.jsonl", O_RDWR|O_CLOEXEC) = 21',
        '100   pwrite64(21, "{\\"v\\":1}\\n", 8, 0 <unfinished ...>',
        '101   write(17, "\\1\\0\\0\\0\\0\\0\\0\\0", 8 <unfinished ...>',
        '100   <... pwrite64 resumed>) = 8',
        '101   <... write resumed>) = 8',
        '100   fdatasync(21)                     = 0',
      ].join('\n'),
    );
    expect(calls.map((c) => [c.pid, c.name, c.result])).toEqual([
      [100, 'openat', 21],
      [100, 'pwrite64', 8],
      [101, 'write', 8],
      [100, 'fdatasync', 0],
    ]);
    expect(calls[1]!.args).toBe('21, "{\\"v\\":1}\\n", 8, 0');
  });
});
