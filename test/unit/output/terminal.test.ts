// Whether an fd is a terminal, asked without loading node:tty for the fds that cannot be one.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isTerminal } from '../../../src/output/terminal';
import { tempDir } from '../../helpers/cli';

const open = (path: string, flags: string) => {
  const fd = fs.openSync(path, flags);
  onTestFinished(() => fs.closeSync(fd));
  return fd;
};

describe('isTerminal', () => {
  it('is false for /dev/null (a character device), a file, a directory and a closed fd', () => {
    expect(isTerminal(open('/dev/null', 'w'))).toBe(false);
    expect(isTerminal(open('/dev/zero', 'r'))).toBe(false);
    const file = join(tempDir(), 'f');
    fs.writeFileSync(file, 'x');
    expect(isTerminal(open(file, 'r'))).toBe(false);
    expect(isTerminal(open(tempDir(), 'r'))).toBe(false);
    expect(isTerminal(987_654)).toBe(false);
  });

  it('is true for a pseudo-terminal', () => {
    // /dev/ptmx opens the master side of a new pty: a terminal device by isatty(3).
    let fd: number;
    try {
      fd = open('/dev/ptmx', 'r+');
    } catch {
      return; // no ptys here (the tmux completion tests cover a real terminal on CI)
    }
    expect(isTerminal(fd)).toBe(true);
  });
});
