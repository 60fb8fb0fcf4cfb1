// The README's two set-up commands on a machine with only Node and npm (issue 54): `npm ci` warns about nothing,
// `npm test` lints clean, and a suite that needs a system tool skips there, saying what to install, but fails in CI.
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli';
import { installLine, missingTools, onPath, TOOLS, toolsSkipReason } from '../helpers/tools';

const ROOT = resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(join(ROOT, file), 'utf8');

describe('npm ci', () => {
  it('has every dependency with an install script answered in allowScripts (npm 11 warns about the others)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const allow: Record<string, boolean> = JSON.parse(read('package.json')).allowScripts ?? {};
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('esbuild');
    expect(withScripts.filter((name) => typeof allow[name] !== 'boolean')).toEqual([]);
  });

  it('pins the registry packages the tests use exactly, the independent BLAKE3 among them', () => {
    const dev: Record<string, string> = JSON.parse(read('package.json')).devDependencies;
    expect(dev['blake3-wasm']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Object.entries(dev).filter(([, v]) => !/^\d+\.\d+\.\d+$/.test(v))).toEqual([]);
  });
});

describe('npm test', () => {
  it('fails on a lint warning (so a quiet run opens with none), the checks beside the build and vitest', () => {
    expect(JSON.parse(read('package.json')).scripts.test).toBe('node test/npm-test.mjs');
    const runner = read('test/npm-test.mjs');
    expect(runner).toContain("['biome', ['ci', '--error-on-warnings']]");
    expect(runner).toContain("['tsc', ['--noEmit']]");
    expect(runner).toContain("['tsc', ['-p', 'web']]");
  });

  it('sets CRUX_REQUIRE_* in CI for every suite that reads one', () => {
    const ci = read('.ci/run');
    const read_ = new Set<string>();
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts')) for (const m of fs.readFileSync(join(dir, e.name), 'utf8').matchAll(/\bCRUX_REQUIRE_[A-Z]+\b/g)) read_.add(m[0]);
      }
    };
    walk(join(ROOT, 'test'));
    expect([...read_].sort()).toEqual(expect.arrayContaining(['CRUX_REQUIRE_BROWSER', 'CRUX_REQUIRE_PG', 'CRUX_REQUIRE_TOOLS']));
    for (const name of read_) expect(ci, name).toMatch(new RegExp(`export [^\\n]*\\b${name}=1`));
  });
});

describe('a system tool the tests use', () => {
  const withEnv = <T>(env: Record<string, string | undefined>, run: () => T): T => {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    for (const [k, v] of Object.entries(env)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    try {
      return run();
    } finally {
      for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  };
  const nodeOnly = resolve(process.execPath, '..', 'no-such-dir-for-tools');

  it('is looked up on PATH', () => {
    expect(onPath('node', resolve(process.execPath, '..'))).toBe(true);
    expect(onPath('strace', nodeOnly)).toBe(false);
    expect(missingTools(['strace', 'groff'], nodeOnly)).toEqual(['strace', 'groff']);
  });

  it('missing: the test is skipped with one line naming the Debian package to install', () => {
    const why = withEnv({ PATH: nodeOnly, CRUX_REQUIRE_TOOLS: undefined }, () => toolsSkipReason('strace', 'groff'));
    expect(why).toBe('no strace, groff (apt-get install -y strace groff-base)');
    expect(why).not.toContain('\n');
    expect(installLine(Object.keys(TOOLS) as (keyof typeof TOOLS)[])).toBe('apt-get install -y b3sum groff-base man-db strace tmux zsh');
  });

  it('missing under CRUX_REQUIRE_TOOLS=1 (CI): a failure, not a skip', () => {
    expect(() => withEnv({ PATH: nodeOnly, CRUX_REQUIRE_TOOLS: '1' }, () => toolsSkipReason('tmux'))).toThrow(
      'CRUX_REQUIRE_TOOLS=1 but no tmux (apt-get install -y tmux)',
    );
  });

  it('present: no reason, the test runs', () => {
    const dir = tempDir('crux-tools-');
    fs.writeFileSync(join(dir, 'zsh'), '#!/bin/sh\n', { mode: 0o755 });
    expect(withEnv({ PATH: dir, CRUX_REQUIRE_TOOLS: '1' }, () => toolsSkipReason('zsh'))).toBeUndefined();
  });
});
