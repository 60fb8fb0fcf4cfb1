// bin/crux in a checkout names the Node that built it in its first line (build.mjs: bin/pinned/crux.cjs), so that a
// call does not exec /usr/bin/env first, and still runs where `#!/usr/bin/env node` would: on the first node on
// PATH (src/cli/path-node.ts). The package's bin, bin/crux.cjs, keeps `#!/usr/bin/env node`.
import { execa } from 'execa';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, freshDataDir, tempDir, testEnv } from '../helpers/cli';
import { firstEntered } from '../reliability/lock-log';

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

  it('hands over to a Node that dies with it: kill -9 of the process a caller started ends the writer too', async () => {
    // Another Node: a copy of this one (another file), first on PATH.
    const other = tempDir('crux-copied-node-');
    fs.copyFileSync(process.execPath, join(other, 'node'));
    fs.chmodSync(join(other, 'node'), 0o755);
    const data = freshDataDir();
    const env = testEnv({ PATH: `${other}:${process.env.PATH}`, CRUX_DATA_DIR: data, CRUX_AGENT: 'a' });
    const lockLog = join(tempDir(), 'lock.log');
    const started = spawn(CRUX, ['session', 'put', 'held', '{"a":1}'], {
      env: { ...env, CRUX_TEST_LOCK_HOLD_MS: '20000', CRUX_TEST_LOCK_LOG: lockLog },
      stdio: 'ignore',
    });
    // The writer inside the lock is the Node the line was handed to: another pid than the one started.
    const writer = await firstEntered(lockLog, () => started.exitCode === null);
    expect(writer).toBeDefined();
    expect(writer).not.toBe(started.pid);
    started.kill('SIGKILL');
    // The next writer sleeps on the holder's connection, which ends when the writer dies with its launcher: it gets
    // the lock at once (not after the 20 s hold), and the write the killed one held never happened.
    const t0 = Date.now();
    const next = await execa(CRUX, ['session', 'put', 'next', '{"b":2}'], { reject: false, env, extendEnv: false, timeout: 10_000 });
    expect(next.exitCode).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    // Gone, or a zombie not yet reaped by whoever adopted it.
    const state = fs.existsSync(`/proc/${writer}/stat`) ? fs.readFileSync(`/proc/${writer}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone';
    expect(['gone', 'Z']).toContain(state);
    const get = await execa(CRUX, ['session', 'get', 'held'], { reject: false, env, extendEnv: false });
    expect(get.exitCode).toBe(3);
  });
});
