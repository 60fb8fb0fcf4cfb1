// bin/crux in a checkout names the Node that built it in its first line (build.mjs: bin/pinned/crux.cjs), so that a
// call does not exec /usr/bin/env first, and still runs where `#!/usr/bin/env node` would: on the first node on
// PATH (src/cli/path-node.ts). The package's bin, bin/crux.cjs, keeps `#!/usr/bin/env node`.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, freshDataDir, tempDir, testEnv } from '../helpers/cli';

const firstLine = (file: string) => fs.readFileSync(file, 'utf8').split('\n', 1)[0];
const dirOf = (file: string) => file.slice(0, file.lastIndexOf('/'));

/** A directory holding an executable `node` that is not this Node: a shell script that runs `body`. */
function otherNode(body: string): string {
  const dir = tempDir('crux-other-node-');
  fs.writeFileSync(join(dir, 'node'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}

const run = (path: string, args: string[], file = CRUX) =>
  execa(file, args, { reject: false, env: testEnv({ PATH: path, CRUX_DATA_DIR: freshDataDir(), CRUX_AGENT: 'a' }), extendEnv: false });

describe('bin/crux', () => {
  it('names this Node in its first line, through a real path that ends in .cjs; the package bin keeps env', () => {
    expect(firstLine(CRUX)).toBe(`#!${process.execPath}`);
    expect(fs.realpathSync(CRUX)).toBe(resolve(__dirname, '../../bin/pinned/crux.cjs'));
    expect(firstLine(CRUX_SCRIPT)).toBe('#!/usr/bin/env node');
  });

  it('runs here when PATH leads to this Node, or to none at all (where env would fail)', async () => {
    const linked = tempDir('crux-linked-node-');
    fs.symlinkSync(process.execPath, join(linked, 'node'));
    for (const path of [`${linked}:${process.env.PATH}`, `${dirOf(process.execPath)}:/bin`, '/nonexistent', '']) {
      const r = await run(path, ['session', 'put', 's', '{"a":1}']);
      expect({ path, exitCode: r.exitCode, stderr: r.stderr }).toEqual({ path, exitCode: 0, stderr: '' });
    }
  });

  it('hands the line to the first node on PATH when that is another Node: its output, its exit status', async () => {
    const other = otherNode('echo "other node: $*"; exit 7');
    const r = await run(`${other}:${process.env.PATH}`, ['session', 'get', 'x y']);
    expect({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({
      exitCode: 7,
      stdout: `other node: ${resolve(__dirname, '../../bin/crux')} session get x y`,
      stderr: '',
    });
    // Run by a Node named on the command line (here through a link of its own), it runs on that Node, whatever PATH
    // says. (Named by the very path of the first line, it cannot be told from a start by that line: PATH decides.)
    const linked = tempDir('crux-linked-node-');
    fs.symlinkSync(process.execPath, join(linked, 'node'));
    const named = await execa(join(linked, 'node'), [CRUX, '--version'], {
      reject: false,
      env: testEnv({ PATH: `${other}:${dirOf(process.execPath)}` }),
      extendEnv: false,
    });
    expect(named.exitCode).toBe(0);
    expect(named.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('ends as the other Node ended: by its signal', async () => {
    const other = otherNode('kill -TERM $$');
    const r = await run(`${other}:${process.env.PATH}`, ['session', 'list']);
    expect(r.signal).toBe('SIGTERM');
  });
});
