// bin/crux's pinned launcher runs where `#!/usr/bin/env node` would: on the first node on PATH (src/cli/path-node.ts).
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { otherNodeOnPath } from '../../../src/cli/path-node';
import { tempDir } from '../../helpers/cli';

describe('the node env would run', () => {
  const SELF = process.execPath;

  function dirs() {
    const root = tempDir('crux-path-');
    const at = (name: string) => {
      const dir = join(root, name);
      fs.mkdirSync(dir);
      return dir;
    };
    return { root, at };
  }

  it('is none to hand to when PATH is unset, empty, or names no node (this Node runs it, where env would fail)', () => {
    const { at } = dirs();
    expect(otherNodeOnPath(undefined, SELF)).toBeUndefined();
    expect(otherNodeOnPath('', SELF)).toBeUndefined();
    expect(otherNodeOnPath(`${at('a')}:${at('b')}:/nonexistent/dir`, SELF)).toBeUndefined();
  });

  it('is this Node when the first node on PATH is it: by name, through a link, or as a hard link', () => {
    const { at } = dirs();
    const linked = at('linked');
    fs.symlinkSync(SELF, join(linked, 'node'));
    expect(otherNodeOnPath(`${at('empty')}:${linked}:/usr/bin`, SELF)).toBeUndefined();
    const named = SELF.slice(0, SELF.lastIndexOf('/'));
    expect(otherNodeOnPath(`${named}:${at('other')}`, SELF)).toBeUndefined();
  });

  it('is the first executable node file on PATH when that is another, passing over what execvp passes over', () => {
    const { at } = dirs();
    const notExecutable = at('plain');
    fs.writeFileSync(join(notExecutable, 'node'), '');
    fs.chmodSync(join(notExecutable, 'node'), 0o644);
    const directory = at('directory');
    fs.mkdirSync(join(directory, 'node'));
    const notADir = join(at('files'), 'file');
    fs.writeFileSync(notADir, '');
    const other = at('other');
    fs.writeFileSync(join(other, 'node'), '#!/bin/sh\n', { mode: 0o755 });
    const linked = at('linked');
    fs.symlinkSync(SELF, join(linked, 'node'));
    expect(otherNodeOnPath([notExecutable, directory, notADir, other, linked].join(':'), SELF)).toBe(join(other, 'node'));
    // The first one wins: this Node before the other.
    expect(otherNodeOnPath([linked, other].join(':'), SELF)).toBeUndefined();
  });

  it('reads an empty entry of PATH as the current directory, as execvp does', () => {
    const seen: string[] = [];
    otherNodeOnPath(':/x', '/self/node', (p) => {
      seen.push(p);
      return undefined;
    });
    expect(seen).toEqual(['./node', '/x/node']);
  });
});
