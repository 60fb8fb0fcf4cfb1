// `npm test`: the build, then vitest; the checks (tsc, tsc -p web, biome ci --error-on-warnings, one after another)
// run beside them from the start instead of before vitest, on the cores vitest leaves idle. Their output is held and
// printed after vitest's, and a failed check fails the run (exit 1) as when they ran first. Arguments go to vitest.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}` };

/** Runs a command to its end: its exit code (1 for a signal), and what it printed when `held`. */
function run(command, args, held) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    const out = [];
    child.stdout?.on('data', (chunk) => out.push(chunk));
    child.stderr?.on('data', (chunk) => out.push(chunk));
    child.on('error', (error) => out.push(Buffer.from(`${command}: ${error.message}\n`)));
    child.on('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(out).toString() }));
  });
}

const CHECKS = [
  ['tsc', ['--noEmit']],
  ['tsc', ['-p', 'web']],
  ['biome', ['ci', '--error-on-warnings']],
];

/** The checks one after another, stopping at the first that fails (as `a && b && c`): the failed one, if any. */
async function checks() {
  for (const [command, args] of CHECKS) {
    const result = await run(command, args, true);
    if (result.code !== 0) return { name: [command, ...args].join(' '), ...result };
  }
  return undefined;
}

const checked = checks();
const built = await run(process.execPath, ['build.mjs'], false);
const tested = built.code === 0 ? await run('vitest', ['run', ...process.argv.slice(2)], false) : built;
const failed = await checked;
if (failed !== undefined) {
  process.stderr.write(`${failed.output}\nnpm test: ${failed.name} failed (exit ${failed.code})\n`);
  process.exitCode = 1;
} else if (tested.code !== 0) process.exitCode = tested.code;
