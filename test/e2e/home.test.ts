// A default data directory that cannot be made absolute is refused: crux never writes under the current directory
// by accident (SPEC §1).
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRUX, tempDir, testEnv } from '../helpers/cli';

async function inDir(cwd: string, env: Record<string, string | undefined>, args: string[]) {
  const run = await execa(CRUX, args, { cwd, reject: false, env: testEnv({ XDG_DATA_HOME: undefined, ...env }), extendEnv: false });
  return { exitCode: run.exitCode, stderr: String(run.stderr) };
}

describe('the default data directory', () => {
  it('is refused (5) with HOME empty, unset or relative and no XDG_DATA_HOME; nothing is written anywhere', async () => {
    for (const home of ['', undefined, 'relative/home']) {
      const cwd = tempDir();
      for (const args of [
        ['session', 'put', 's', '{}'],
        ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
        ['session', 'list'],
        ['doctor'],
      ]) {
        const run = await inDir(cwd, { HOME: home }, args);
        expect(run.exitCode, `HOME=${JSON.stringify(home)} ${args.join(' ')}`).toBe(5);
        expect(run.stderr).toMatch(/^crux: no data directory: HOME is (empty|not set|not an absolute path).*--data-dir.*$/);
      }
      expect(fs.readdirSync(cwd)).toEqual([]);
    }
  });

  it('is still found through --data-dir, CRUX_DATA_DIR or an absolute XDG_DATA_HOME when HOME is empty', async () => {
    const cwd = tempDir();
    const base = tempDir();
    expect((await inDir(cwd, { HOME: '' }, ['--data-dir', join(base, 'flag'), 'session', 'put', 's', '{}'])).exitCode).toBe(0);
    expect((await inDir(cwd, { HOME: '', CRUX_DATA_DIR: join(base, 'env') }, ['session', 'put', 's', '{}'])).exitCode).toBe(0);
    expect((await inDir(cwd, { HOME: '', XDG_DATA_HOME: join(base, 'xdg') }, ['session', 'put', 's', '{}'])).exitCode).toBe(0);
    expect(fs.readdirSync(base).sort()).toEqual(['env', 'flag', 'xdg']);
    expect(fs.existsSync(join(base, 'xdg', 'crux'))).toBe(true);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });
});
