// Random bytes for ids: from /dev/urandom, and from node:crypto where something else stands in its place.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomBytes } from '../../../src/shared/random';
import { newId } from '../../../src/shared/ids';
import { tempDir } from '../../helpers/cli';

describe('randomBytes', () => {
  it('gives the bytes asked for, a different draw each time', () => {
    const draws = Array.from({ length: 200 }, () => randomBytes(12).toString('hex'));
    expect(draws.every((d) => d.length === 24)).toBe(true);
    expect(new Set(draws).size).toBe(200);
    expect(randomBytes(12_000)).toHaveLength(12_000);
  });

  it('falls back to node:crypto for a FIFO (without blocking), a regular file, a symlink or nothing there', () => {
    const dir = tempDir('crux-random-');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const file = join(dir, 'file');
    fs.writeFileSync(file, Buffer.alloc(64));
    const link = join(dir, 'link');
    fs.symlinkSync('/dev/urandom', link);
    for (const device of [fifo, file, link, join(dir, 'missing')]) {
      const a = randomBytes(12, device);
      const b = randomBytes(12, device);
      expect(a, device).toHaveLength(12);
      // Not the file's zeros, and not the same twice.
      expect(a.equals(Buffer.alloc(12)), device).toBe(false);
      expect(a.equals(b), device).toBe(false);
    }
  });

  it('makes ids of 24 hex digits after the prefix', () => {
    expect(newId('c', randomBytes(12))).toMatch(/^c_[0-9a-f]{24}$/);
    expect(newId('h', Buffer.from('000102030405060708090a0b', 'hex'))).toBe('h_000102030405060708090a0b');
  });
});
