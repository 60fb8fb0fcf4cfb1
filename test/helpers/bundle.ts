// A source module bundled as the build bundles it (CommonJS, its imports inlined), as text: for a test that runs
// it in a process of its own (a module whose switches are per process, a module that calls process.exit). The
// secret detector's rule set stays out, as the build keeps it in a bundle of its own (loaded on first use).
import { buildSync } from 'esbuild';

export function bundledModule(url: URL): string {
  return buildSync({
    entryPoints: [url.pathname],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    write: false,
    external: ['@secretlint/secretlint-rule-preset-recommend'],
  }).outputFiles[0]!.text;
}
