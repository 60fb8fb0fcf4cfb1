// What users run is the product alone (SPEC §1): no variable of the build changes what a command does or where it
// writes when a user's environment sets it, and the package holds no path of the machine that built it.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import * as vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CRUX, CRUX_SCRIPT, tempDir, testEnv } from '../helpers/cli';

const ROOT = resolve(__dirname, '../..');
const KEY = `${process.version}-${process.arch}`;

/** Runs the package's launcher (bin/crux.cjs, as npm links it) with a home of its own and these variables. */
async function run(home: string, env: Record<string, string>, args: string[], script = CRUX_SCRIPT) {
  const r = await execa(process.execPath, [script, ...args], {
    reject: false,
    env: testEnv({ HOME: home, XDG_DATA_HOME: undefined, XDG_CACHE_HOME: join(home, '..', 'cache'), ...env }),
    extendEnv: false,
  });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), signal: r.signal };
}

/** Every file under `dir`. */
const filesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));

describe("the build's variables in a user's environment", () => {
  // The full program (journal check, session history), and each fast bundle's command (get, put, list, record).
  const lines = [
    ['session', 'get', 'a'],
    ['session', 'history', 'a'],
    ['session', 'list', '--json'],
    ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o', '--quiet'],
    ['journal', 'check', '--json'],
  ];

  it('runs no warm-up: CRUX_WARM_UP changes nothing a command does, nor where it writes', async () => {
    const home = tempDir();
    const data = join(tempDir(), 'data');
    const warmUps = [JSON.stringify([['session', 'put', 'zz', '{}']]), 'x', JSON.stringify([['--data-dir', data, 'session', 'put', 'zz', '{}']])];
    // Each line's answer without a warm-up, once, against its answer under each warm-up.
    const plains = [];
    for (const line of lines) plains.push(await run(home, {}, ['--data-dir', join(tempDir(), 'data'), ...line]));
    for (const warmUp of warmUps) {
      for (const [i, line] of lines.entries()) {
        const warmed = await run(home, { CRUX_WARM_UP: warmUp }, ['--data-dir', join(tempDir(), 'data'), ...line]);
        expect({ line, exitCode: warmed.exitCode, stderr: warmed.stderr.replace(/\S*\/data\b/g, 'D') }).toEqual({
          line,
          exitCode: plains[i]!.exitCode,
          stderr: plains[i]!.stderr.replace(/\S*\/data\b/g, 'D'),
        });
      }
    }
    // Nothing was written into the user's default store, nor into the store a warm-up named.
    expect(fs.readdirSync(home)).toEqual([]);
    expect(fs.existsSync(data)).toBe(false);
  });

  it("writes no code cache into the package for CRUX_WRITE_CODE_CACHE, and the package's launcher ignores CRUX_HANDED_BY", async () => {
    // A copy of the package (bin/, dist/), as npm installs it.
    const pkg = tempDir('crux-pkg-');
    fs.cpSync(join(ROOT, 'bin'), join(pkg, 'bin'), { recursive: true, verbatimSymlinks: true });
    fs.cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.tmp') });
    const caches = () =>
      Object.fromEntries(
        fs
          .readdirSync(join(pkg, 'dist'))
          .filter((name) => name.endsWith('.v8cache'))
          .map((name) => [name, fs.readFileSync(join(pkg, 'dist', name)).toString('base64')]),
      );
    const before = caches();
    expect(Object.keys(before)).toContain(`crux.cjs.${KEY}.v8cache`);
    const home = tempDir();
    const bundles = 'crux.cjs,mcp.cjs,fast.cjs,fast-read.cjs,fast-list.cjs,fast-record.cjs,fast-retrieve.cjs';
    for (const line of [['session', 'put', 'a', '{}'], ...lines]) {
      const r = await run(home, { CRUX_WRITE_CODE_CACHE: bundles }, ['--data-dir', join(home, 'data'), ...line], join(pkg, 'bin/crux.cjs'));
      expect(r.exitCode, line.join(' ')).toBe(0);
    }
    expect(caches()).toEqual(before);
    // The package's launcher hands no line to another Node: a variable naming a process that handed it one (here
    // init, never its parent) does not end it.
    const handed = await run(home, { CRUX_HANDED_BY: '1' }, ['--data-dir', join(home, 'data'), 'session', 'get', 'a'], join(pkg, 'bin/crux.cjs'));
    expect({ exitCode: handed.exitCode, signal: handed.signal, stdout: handed.stdout }).toEqual({ exitCode: 0, signal: undefined, stdout: '{}' });
  });

  it("carries no build variable's name in what it ships", () => {
    for (const file of [CRUX_SCRIPT, ...filesUnder(join(ROOT, 'dist')).filter((f) => f.endsWith('.cjs'))]) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/CRUX_WARM_UP|CRUX_WRITE_CODE_CACHE/);
    }
    expect(fs.realpathSync(CRUX)).toMatch(/crux\.cjs$/);
  });
});

describe('the package', () => {
  it('holds no path of the machine that built it: every file of the npm pack tarball is searched', async () => {
    const out = tempDir();
    // The bundles were built by `npm test`; prepack would build them again.
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: ROOT, env: testEnv() });
    const [info] = JSON.parse(String(pack.stdout)) as [{ filename: string }];
    const unpacked = join(out, 'unpacked');
    fs.mkdirSync(unpacked);
    await execa('tar', ['-xzf', join(out, info.filename), '-C', unpacked]);
    const files = filesUnder(unpacked);
    expect(files.filter((f) => f.endsWith('.v8cache')).length).toBeGreaterThanOrEqual(12);
    // The checkout's path, and the real path it resolves to (a checkout reached through a link).
    const paths = [...new Set([ROOT, fs.realpathSync(ROOT)])];
    const naming = files.filter((file) => {
      const bytes = fs.readFileSync(file);
      return paths.some((path) => bytes.includes(path) || bytes.includes(Buffer.from(path, 'utf16le')));
    });
    expect(naming.map((f) => f.slice(unpacked.length + 1))).toEqual([]);
  });

  it('ships code caches that the Node that built them accepts under the path the package is installed at', () => {
    for (const bundle of ['crux.cjs', 'mcp.cjs', 'fast-read.cjs', 'fast.cjs']) {
      const source = fs.readFileSync(join(ROOT, 'dist', bundle), 'utf8');
      const cachedData = fs.readFileSync(join(ROOT, 'dist', `${bundle}.${KEY}.v8cache`));
      const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n});`, {
        filename: join(tempDir(), 'node_modules/crux/dist', bundle),
        cachedData,
      });
      expect(script.cachedDataRejected, bundle).toBe(false);
    }
  });
});
