// man/crux-session.1 renders without warnings and documents every session command and option the CLI has.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crux, freshDataDir } from '../helpers/cli';
import { titled, toolsSkipReason } from '../helpers/tools';

const PAGE = resolve(__dirname, '../../man/crux-session.1');
const COMMANDS = ['put', 'get', 'history', 'list', 'archive', 'unarchive', 'delete', 'close', 'reap', 'machine', 'export', 'import'];
const noGroff = toolsSkipReason('groff');

describe('man/crux-session.1', () => {
  it.skipIf(noGroff !== undefined)(titled('renders with groff -man -ww -z and no warnings', noGroff), () => {
    const run = spawnSync('groff', ['-t', '-man', '-ww', '-z', PAGE], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(execFileSync('groff', ['-man', '-ww', '-z', PAGE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).toBe('');
  });

  it('names every command and every option of `crux session <command> --help`', async () => {
    const page = fs
      .readFileSync(PAGE, 'utf8')
      .replace(/\\-/g, '-')
      .replace(/\\f[BIRP]/g, '');
    const group = await crux(freshDataDir(), ['session', '--help']);
    const listed = [...group.stdout.matchAll(/^ {2}([a-z]+)(?:\|[a-z]+)? /gm)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(listed.sort()).toEqual([...COMMANDS].sort());
    for (const command of COMMANDS) {
      expect(page, command).toMatch(new RegExp(`session ${command}\\b|^\\\\?${command}\\b|\\b${command}\\b \\(alias`, 'm'));
      const help = await crux(freshDataDir(), ['session', command, '--help']);
      expect(help.exitCode).toBe(0);
      // The command's own options: the global ones (listed after them, as gh does) are crux(1)'s.
      const own = help.stdout.split('\nGlobal Options:')[0]!;
      const options = [...own.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!).filter((o) => o !== '--help');
      for (const option of options) expect(page, `${command} ${option}`).toContain(option);
    }
    expect(page).toContain('(alias ls)');
  });
});
