// An install that works where users install: npm pack, then npm install -g of the tarball, with no install
// script, no dependency, and crux and `man crux` found afterwards.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir, testEnv } from '../helpers/cli';
import { toolsSkipReason } from '../helpers/tools';

const ROOT = resolve(__dirname, '../..');

describe('the package', () => {
  it('packs what it runs and nothing more, installs globally without a warning, and runs with its man pages', async () => {
    const out = tempDir();
    // The bundles were built by `npm test`; prepack would build them again.
    const pack = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: ROOT, env: testEnv() });
    const [info] = JSON.parse(String(pack.stdout)) as [{ filename: string; files: { path: string }[] }];
    const files = info.files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'bin/crux.cjs',
        'dist/crux.cjs',
        'dist/fast-read.cjs',
        'dist/fast.cjs',
        'dist/fast-record.cjs',
        'dist/fast-list.cjs',
        'dist/fast-retrieve.cjs',
        'dist/mcp.cjs',
        'dist/pg.cjs',
        'dist/THIRD-PARTY-NOTICES.txt',
        'dist/ui/index.html',
        'dist/ui/app.js',
        'man/crux.1',
        'package.json',
      ]),
    );
    expect(
      files.filter(
        (f) =>
          !/^(LICENSE|README\.md|package\.json|bin\/crux\.cjs|dist\/[\w.-]+\.(cjs|v8cache)|dist\/THIRD-PARTY-NOTICES\.txt|dist\/ui\/[\w.-]+\.(html|js|css|png|svg)|man\/crux[\w-]*\.[15])$/.test(
            f,
          ),
      ),
    ).toEqual([]);
    const manifest = JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.scripts).filter((s) => ['install', 'preinstall', 'postinstall', 'prepare'].includes(s))).toEqual([]);
    expect(fs.readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);

    const prefix = tempDir();
    const install = await execa('npm', ['install', '-g', '--prefix', prefix, join(out, info.filename)], { env: testEnv(), all: true });
    expect(String(install.all)).not.toMatch(/warn/i);
    expect(String(install.all)).toMatch(/added 1 package/);
    expect(fs.existsSync(join(prefix, 'lib/node_modules/crux/node_modules'))).toBe(false);
    const home = tempDir();
    const crux = (...args: string[]) => execa(join(prefix, 'bin/crux'), ['--data-dir', join(home, 'data'), ...args], { env: testEnv({ HOME: home }) });
    await crux('session', 'put', 'a', '{"x": 1}');
    expect(String((await crux('session', 'get', 'a')).stdout)).toBe('{"x": 1}');
    // npm's bin link, `crux`, names the launcher (a checkout's bin/crux links to it too: npm packs no links).
    expect(fs.realpathSync(join(prefix, 'bin/crux'))).toBe(join(fs.realpathSync(prefix), 'lib/node_modules/crux/bin/crux.cjs'));
    expect(fs.existsSync(join(prefix, 'share/man/man1/crux.1'))).toBe(true);
    // `man` itself finds the page where it is installed (always in CI).
    if (toolsSkipReason('man') === undefined) {
      const man = await execa('man', ['-w', 'crux'], { env: testEnv({ MANPATH: join(prefix, 'share/man') }), reject: false });
      expect(String(man.stdout)).toMatch(/crux\.1/);
    }
  });
});
