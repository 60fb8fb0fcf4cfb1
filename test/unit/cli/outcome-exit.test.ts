// How a run's answer ends the process (cli/outcome.ts exitWith): with its code, after the run and not before; with
// `promptly` (the fast paths) at once, without waiting for the event loop to empty; and never 0 for a run that
// no one settles.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bundledModule } from '../../helpers/bundle';

// The module as the bundles have it, run in a process of its own: process.exit() would end the test runner.
const outcome = bundledModule(new URL('../../../src/cli/outcome.ts', import.meta.url));

/** Runs `body` after exitWith is in scope; its exit code, stdout and stderr. */
function runScript(body: string) {
  const script = `const module = { exports: {} }; (function (exports, module) { ${outcome} })(module.exports, module);
    const { exitWith } = module.exports;
    const out = (text) => require('node:fs').writeSync(1, text);
    ${body}`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('exitWith', () => {
  it('promptly: the run’s code at once, with what the run wrote; work still queued in the event loop does not run', () => {
    const r = runScript(`
      process.on('exit', (code) => out('exit listener ' + code + '\\n'));
      setTimeout(() => out('a timer after the answer\\n'), 300);
      exitWith(new Promise((resolve) => setTimeout(() => { out('the run\\n'); resolve(3); }, 20)), { promptly: true });`);
    expect(r).toEqual({ status: 3, stdout: 'the run\nexit listener 3\n', stderr: '' });
  });

  it('without promptly: the run’s code once the event loop is empty, after the work still queued', () => {
    const r = runScript(`
      setTimeout(() => out('a timer after the answer\\n'), 300);
      exitWith(new Promise((resolve) => setTimeout(() => { out('the run\\n'); resolve(4); }, 20)));`);
    expect(r).toEqual({ status: 4, stdout: 'the run\na timer after the answer\n', stderr: '' });
  });

  it('a run that throws: exit 1 and its error on stderr, promptly or not', () => {
    for (const promptly of [true, false]) {
      const r = runScript(`exitWith(Promise.reject(new Error('boom')), { promptly: ${promptly} });`);
      expect(r).toEqual({ status: 1, stdout: '', stderr: 'crux: internal error: Error: boom\n' });
    }
  });

  it('a run that never answers is never an exit 0, promptly or not', () => {
    for (const promptly of [true, false]) {
      const r = runScript(`exitWith(new Promise(() => {}), { promptly: ${promptly} });`);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^crux: internal error: the command ended without finishing/);
    }
  });
});
