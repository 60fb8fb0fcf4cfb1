// Bundles the dashboard's front-end (web/) into dist/ui/: app.js (one minified browser script, no inline code),
// app.css (with web/css/), index.html and the icon. Only `crux ui` reads these files; each is written aside and renamed in place.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

export async function bundleUi(outDir = 'dist/ui') {
  mkdirSync(outDir, { recursive: true });
  const staged = (name) => join(outDir, `${name}.${process.pid}.tmp`);
  await build({
    entryPoints: ['web/app.ts'],
    outfile: staged('app.js'),
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: process.env.CRUX_BUILD_READABLE !== '1',
    legalComments: 'none',
    logLevel: 'warning',
  });
  // app.css and the files it imports (web/css/), as one stylesheet.
  await build({
    entryPoints: ['web/app.css'],
    outfile: staged('app.css'),
    bundle: true,
    minify: process.env.CRUX_BUILD_READABLE !== '1',
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const name of ['index.html', 'icon.svg']) copyFileSync(join('web', name), staged(name));
  const sizes = {};
  for (const name of ['app.js', 'index.html', 'app.css', 'icon.svg']) {
    renameSync(staged(name), join(outDir, name));
    sizes[name] = statSync(join(outDir, name)).size;
  }
  return sizes;
}
