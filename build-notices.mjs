// The third-party notices the bundles owe: every npm package esbuild put into a bundle (from its metafile),
// with its version, licence and licence text, written to dist/THIRD-PARTY-NOTICES.txt, which the package ships.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package directories (node_modules/<name> or node_modules/@scope/<name>) of a metafile's inputs. */
export function bundledPackages(metafile) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) dirs.add(input.slice(0, m.index + m[0].length - 1).replace(/^\//, ''));
  }
  return dirs;
}

const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;

/** One notice per package, sorted by name: `name version (licence)` and the texts of its licence files. */
export function noticesText(packageDirs) {
  const entries = [...packageDirs].map((dir) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const files = readdirSync(dir)
      .filter((f) => LICENCE_FILE.test(f))
      .sort();
    if (files.length === 0 && !pkg.license) throw new Error(`${pkg.name}@${pkg.version} declares no licence and carries no licence file`);
    const texts =
      files.length > 0
        ? files.map((f) => readFileSync(join(dir, f), 'utf8').trim())
        : [
            `Licensed under ${pkg.license} as its package.json declares${pkg.author ? ` (author: ${typeof pkg.author === 'string' ? pkg.author : pkg.author.name})` : ''}; the package ships no licence file.`,
          ];
    return { name: pkg.name, head: `${pkg.name} ${pkg.version} (${pkg.license ?? 'see below'})`, texts };
  });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const intro = 'crux bundles the following packages; their licences and notices follow.\n';
  return [intro, ...entries.map((e) => `${'='.repeat(78)}\n${e.head}\n${'-'.repeat(78)}\n${e.texts.join('\n\n')}\n`)].join('\n');
}

export function writeNotices(packageDirs, out = 'dist/THIRD-PARTY-NOTICES.txt') {
  for (const dir of packageDirs) if (!existsSync(join(dir, 'package.json'))) throw new Error(`no package.json in ${dir}`);
  writeFileSync(out, noticesText(packageDirs));
}
