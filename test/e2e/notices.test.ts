// The third-party notices ship with the package and name exactly what the bundles carry, at the versions installed.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '../..');
const NOTICES = join(ROOT, 'dist/THIRD-PARTY-NOTICES.txt');

/** `name version (licence)` headings of the notices file. */
function headings(): { name: string; version: string; licence: string }[] {
  const text = fs.readFileSync(NOTICES, 'utf8');
  return [...text.matchAll(/^={78}\n(\S+) (\S+) \(([^)]+)\)\n-{78}\n(.+)/gm)].map((m) => {
    expect(m[4]!.trim().length, `${m[1]} has a licence text`).toBeGreaterThan(0);
    return { name: m[1]!, version: m[2]!, licence: m[3]! };
  });
}

describe('third-party notices', () => {
  it('name every package an independent esbuild run finds in the bundles, each at its installed version and licence', async () => {
    // The entry points build.mjs bundles (the postgres client is a bundle of its own).
    const entries = ['src/cli/main.ts', 'src/cli/mcp/sdk.ts', 'src/cli/code-cache.ts', 'node_modules/postgres/cjs/src/index.js'].map((e) => join(ROOT, e));
    const { metafile } = await build({
      entryPoints: entries,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      metafile: true,
      outdir: '/nonexistent',
      logLevel: 'silent',
      external: ['postgres'],
      // As build.mjs: the SDK's Ajv provider is left out of dist/mcp.cjs (src/cli/mcp/server.ts gives the Server its
      // own validator), and Ajv with it.
      plugins: [
        {
          name: 'without-ajv',
          setup(b) {
            b.onResolve({ filter: /validation\/ajv-provider\.js$/ }, (args) =>
              args.importer.includes('@modelcontextprotocol/sdk') ? { path: 'ajv-provider', namespace: 'no-ajv' } : undefined,
            );
            b.onLoad({ filter: /.*/, namespace: 'no-ajv' }, () => ({ contents: 'export class AjvJsonSchemaValidator {}', loader: 'js' }));
          },
        },
      ],
    });
    const bundled = new Set(
      Object.keys(metafile.inputs).flatMap((input) => {
        const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
        return m ? [m[1]!] : [];
      }),
    );
    const listed = headings();
    expect(listed.map((h) => h.name).sort()).toEqual([...bundled].sort());
    for (const h of listed) {
      const pkg = JSON.parse(fs.readFileSync(join(ROOT, 'node_modules', h.name, 'package.json'), 'utf8'));
      expect(`${h.name} ${h.version} ${h.licence}`).toBe(`${h.name} ${pkg.version} ${pkg.license}`);
    }
    for (const name of ['commander', 'chalk', 'zod', '@modelcontextprotocol/sdk', 'postgres', '@noble/hashes']) expect(bundled).toContain(name);
    for (const name of ['ajv', 'ajv-formats', 'fast-uri']) expect(bundled).not.toContain(name);
  });

  it('are in the files the package ships', () => {
    const manifest = JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    expect(manifest.files).toContain('dist/THIRD-PARTY-NOTICES.txt');
  });
});
