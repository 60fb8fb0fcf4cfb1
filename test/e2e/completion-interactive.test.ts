// Completion as a person meets it: the script loaded into a real interactive bash and zsh (in tmux), <Tab> pressed.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CRUX, crux, freshDataDir, tempDir } from '../helpers/cli';
import { titled, toolsSkipReason } from '../helpers/tools';

const noTmux = toolsSkipReason('tmux');
const noZsh = noTmux ?? toolsSkipReason('zsh');
const socket = `crux-completion-${process.pid}`;
const tmux = (...args: string[]) => execa('tmux', ['-L', socket, ...args], { reject: false });

afterAll(async () => {
  await tmux('kill-server');
});

/** Starts `shell` in a tmux window of its own, with crux on PATH and nothing else of this environment. */
async function startShell(name: string, shell: string): Promise<void> {
  const home = tempDir();
  const env = `env -i HOME=${home} PATH=${dirname(CRUX)}:/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8`;
  await tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', `${env} ${shell}`);
}

async function screen(name: string): Promise<string> {
  return String((await tmux('capture-pane', '-p', '-t', name)).stdout);
}

/** Waits until the screen matches (the shell, crux and the machine all take their time). */
async function waitFor(name: string, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 15_000;
  let text = '';
  while (Date.now() < deadline) {
    text = await screen(name);
    if (pattern.test(text)) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the screen never matched ${pattern}:\n${text}`);
}

// Keys as tmux names them (Tab, C-u) or text, which must not begin with "-" (tmux would read a flag).
const type = (name: string, ...keys: string[]) => tmux('send-keys', '-t', name, ...keys);

async function setUp() {
  const dir = freshDataDir();
  await crux(dir, ['session', 'put', 'build-42', '{}']);
  await crux(dir, ['session', 'put', 'build-43', '{}']);
  await crux(dir, ['--agent', 'planner', 'session', 'put', 'plan-7', '{}']);
  const script = (shell: string) => {
    const path = join(tempDir(), `crux.${shell}`);
    return crux(dir, ['completion', shell]).then((r) => (fs.writeFileSync(path, r.stdout), path));
  };
  return { dir, bash: await script('bash'), zsh: await script('zsh') };
}

describe('completion in an interactive shell', async () => {
  const ready = noTmux === undefined ? await setUp() : undefined;

  it.skipIf(ready === undefined)(titled('bash: <Tab> completes commands, option values and ids of the data directory on the line', noTmux), async () => {
    const { dir, bash } = ready!;
    await startShell('bash', 'bash --norc --noprofile -i');
    await type('bash', `PS1='$ '; source ${bash}; clear`, 'Enter');
    await waitFor('bash', /^\$ ?$/m);
    await type('bash', 'crux sess', 'Tab');
    await waitFor('bash', /\$ crux session$/m);
    await type('bash', 'C-u', `crux --data-dir ${dir} session get b`, 'Tab');
    await waitFor('bash', /session get build-4$/m);
    await type('bash', 'Tab', 'Tab');
    await waitFor('bash', /build-42\s+build-43/);
    await type('bash', 'C-u', `crux --data-dir ${dir} --agent planner session close pl`, 'Tab');
    await waitFor('bash', /session close plan-7$/m);
    await type('bash', ' --outcome ab', 'Tab');
    await waitFor('bash', /plan-7 +--outcome abandoned$/m);
    // --data-dir=<dir> (bash splits it at the =), help's own commands, no ids for a second argument.
    await type('bash', 'C-u', `crux --data-dir=${dir} session get bu`, 'Tab');
    await waitFor('bash', /--data-dir=\S+ session get build-4$/m);
    await type('bash', 'C-u', 'crux help session hi', 'Tab');
    await waitFor('bash', /crux help session history$/m);
    await type('bash', 'C-u', `crux --data-dir ${dir} session put build-42 b`, 'Tab', 'Tab');
    await type('bash', 'C-u', 'echo done-', 'Enter');
    await waitFor('bash', /^done-$/m);
    expect(await screen('bash')).not.toMatch(/session put build-42 build-4/);
  });

  it.skipIf(ready === undefined || noZsh !== undefined)(titled('zsh: the same, through compinit', noZsh), async () => {
    const { dir, zsh } = ready!;
    await startShell('zsh', 'zsh -f -i');
    await type('zsh', `PS1='%% '; autoload -U compinit; compinit -u; source ${zsh}; clear`, 'Enter');
    await waitFor('zsh', /^% ?$/m);
    await type('zsh', 'crux sess', 'Tab');
    await waitFor('zsh', /% crux session$/m);
    await type('zsh', 'C-u', `crux --data-dir ${dir} session get build-4`, 'Tab');
    await waitFor('zsh', /build-42\s+build-43/);
    await type('zsh', 'C-u', `crux --data-dir ${dir} --agent planner session close pl`, 'Tab');
    await waitFor('zsh', /session close plan-7$/m);
    await type('zsh', 'C-u', `crux --data-dir ${dir} handoff mint x --alg ed`, 'Tab');
    await waitFor('zsh', /--alg ed25519$/m);
    await type('zsh', 'C-u', `crux --data-dir=${dir} session get bu`, 'Tab');
    await waitFor('zsh', /--data-dir=\S+ session get build-4$/m);
    await type('zsh', 'C-u', 'crux help session hi', 'Tab');
    await waitFor('zsh', /crux help session history$/m);
  });
});
