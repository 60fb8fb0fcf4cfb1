// Bundle the CLI into one minified CommonJS file: one file to compile is the fastest start-up on Node 20.
import { build } from 'esbuild';

// commander loads node:child_process at start-up only for executable subcommands, which crux does not use;
// loading it costs several ms per invocation, so it is required on first use instead.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      args.importer.includes('node_modules/commander') ? { path: 'lazy-child-process', namespace: 'crux-shim' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'crux-shim' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/crux.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: process.env.CRUX_NO_MINIFY !== '1',
  keepNames: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [lazyChildProcess],
});
