// Bundle the CLI into one minified CommonJS file (one file to compile is the fastest start-up on Node 20),
// then record V8's code cache for it by running one representative command (see src/cli/launch.ts).
import { build } from 'esbuild';
import { bundleUi } from './web/bundle.mjs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledPackages, writeNotices } from './build-notices.mjs';

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

// The PostgreSQL client loads only for a postgres:// store: it is a bundle of its own (dist/pg.cjs) that the
// main bundle requires on first use, so every other command's start-up neither parses nor compiles it.
const separatePostgres = {
  name: 'separate-postgres',
  setup(b) {
    b.onResolve({ filter: /^postgres$/ }, () => ({ path: './pg.cjs', external: true }));
  },
};
// The TOML library loads only for `crux mcp install codex` (Codex's config.toml): a bundle of its own, as pg.cjs.
const separateToml = {
  name: 'separate-toml',
  setup(b) {
    b.onResolve({ filter: /^smol-toml$/ }, () => ({ path: './toml.cjs', external: true }));
  },
};
// The PostgreSQL engine (src/journal/pg/, a fifth of the fast path's code) and every store's vocabulary, which
// only it needs (a get reads the sessions' alone), are left out of the fast bundles (dist/fast-read.cjs, …),
// which bin/crux loads for a line that names no PostgreSQL store (--store, CRUX_STORE):
// cli/store.ts requires them (cli/store-pg.ts) only to open such a store, and these bundles hand such a line to
// the bundles with them (src/cli/fast/start.ts), so the stub below is never reached. The -pg twins are the same
// entries with the engine, for the lines that name one.
const withoutPostgresEngine = {
  name: 'without-postgres-engine',
  setup(b) {
    b.onResolve({ filter: /^\.\/store-pg$/ }, (args) =>
      args.importer.endsWith('src/cli/store.ts') ? { path: args.path, namespace: 'crux-no-pg' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'crux-no-pg' }, () => ({
      contents: "throw new Error('the PostgreSQL engine is not in this bundle: bin/crux loads fast-pg.cjs for a PostgreSQL store');",
      loader: 'js',
    }));
  },
};
// The get's and the list's bundles (fast-read*.cjs, fast-list*.cjs) open a data directory through
// store-dir-quick.ts, which reads through a verified index (or replays a store that needs no writing) and hands
// every other read on to the full program (src/journal/dir/quick-read.ts): they carry none of the lock's, the
// rebuild's, the snapshots' or the writes' code.
const quickDirStore = {
  name: 'quick-dir-store',
  setup(b) {
    b.onResolve({ filter: /^\.\/store-dir$/ }, (args) =>
      args.importer.endsWith('src/cli/store.ts') ? { path: join(args.resolveDir, 'store-dir-quick.ts') } : undefined,
    );
  },
};
// The secret detector's rule set (secretlint's) loads only where free text is written or an error shown: a bundle
// of its own, as pg.cjs, so that a read neither parses nor compiles it.
const separateSecretRules = {
  name: 'separate-secret-rules',
  setup(b) {
    b.onResolve({ filter: /^@secretlint\/secretlint-rule-preset-recommend$/ }, () => ({ path: './secretlint.cjs', external: true }));
  },
};
// The SDK's Server makes an Ajv (with its formats) for a JSON Schema validator unless it is given one: ~3 ms of every
// `crux mcp` start for a validator only elicitation uses, which crux never sends. src/cli/mcp/server.ts gives it its
// own (which refuses), so dist/mcp.cjs carries no Ajv: the SDK's module of it is this stub, which nothing constructs.
const withoutAjv = {
  name: 'without-ajv',
  setup(b) {
    b.onResolve({ filter: /validation\/ajv-provider\.js$/ }, (args) =>
      args.importer.includes('@modelcontextprotocol/sdk') ? { path: 'ajv-provider', namespace: 'crux-no-ajv' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'crux-no-ajv' }, () => ({
      contents:
        "export class AjvJsonSchemaValidator { constructor() { throw new Error('crux mcp carries no Ajv: src/cli/mcp/server.ts gives the Server its own validator'); } }",
      loader: 'js',
    }));
  },
};
const noPostgres = { define: { CRUX_FAST_WITHOUT_POSTGRES: 'true' }, plugins: [withoutPostgresEngine, separatePostgres, separateToml, separateSecretRules] };
// Every code cache goes first: V8 must never pair one with a new bundle. Each bundle that runs through
// src/cli/code-cache.ts ends with its build id (a content hash), which names the caches made on first use.
mkdirSync('dist', { recursive: true });
for (const name of readdirSync('dist')) if (name.endsWith('.v8cache')) rmSync(`dist/${name}`, { force: true });
const stampBuildId = (file) => appendFileSync(file, `\n//# crux-build ${createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 16)}\n`);

/**
 * Bundles one entry point into dist/<name>, written aside and renamed into place: a crux started during a
 * rebuild (another shell, a running test suite) must never load a half-written or empty bundle, which would run
 * nothing and exit 0. A bundle loaded through src/cli/code-cache.ts is stamped with its build id first.
 */
const bundled = new Set();
const built = new Set();
async function bundle(entry, name, { stamp = false, plugins = [], to = `dist/${name}`, banner, define } = {}) {
  const staged = `${to}.${process.pid}.tmp`;
  const { metafile } = await build({
    entryPoints: [entry],
    outfile: staged,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: process.env.CRUX_BUILD_READABLE !== '1',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    plugins,
    define,
    banner: banner === undefined ? undefined : { js: banner },
  });
  for (const dir of bundledPackages(metafile)) bundled.add(dir);
  if (stamp) stampBuildId(staged);
  if (banner !== undefined) chmodSync(staged, 0o755);
  renameSync(staged, to);
  built.add(to);
}

// bin/crux.cjs: the launcher with the code-cache loader inside it (src/cli/launch.ts), the package's bin, which
// starts through `#!/usr/bin/env node`; npm packs no links, and the package's `crux` is npm's own link to it.
// bin/pinned/crux.cjs: the same launcher naming the Node that builds it in its first line, so that a call does not
// exec /usr/bin/env first (~0.6 ms); it runs on the first node on PATH all the same when that is another Node
// (src/cli/path-node.ts). bin/crux, what a checkout runs, links to it, or to bin/crux.cjs where this Node's path
// cannot be a first line. Node reads the package.json above a main script whose name does not end in .cjs, to
// learn whether it is an ES module (~1.5 M instructions a call): both real paths end in .cjs.
mkdirSync('bin/pinned', { recursive: true });
await bundle('src/cli/launch.ts', 'crux.cjs', { to: 'bin/crux.cjs', banner: '#!/usr/bin/env node', define: { CRUX_PINNED_NODE: 'undefined' } });
// Linux reads at most 255 bytes of a first line; a space or a newline would split or end the path.
const pinnable = process.platform !== 'win32' && process.execPath.startsWith('/') && process.execPath.length < 200 && !/[\s\\]/.test(process.execPath);
if (pinnable) {
  await bundle('src/cli/launch.ts', 'crux.cjs', {
    to: 'bin/pinned/crux.cjs',
    banner: `#!${process.execPath}`,
    define: { CRUX_PINNED_NODE: JSON.stringify(process.execPath) },
  });
} else rmSync('bin/pinned', { recursive: true, force: true });
{
  const staged = `bin/crux.${process.pid}.tmp`;
  rmSync(staged, { force: true });
  symlinkSync(pinnable ? 'pinned/crux.cjs' : 'crux.cjs', staged);
  renameSync(staged, 'bin/crux');
}
await bundle('node_modules/postgres/cjs/src/index.js', 'pg.cjs');
await bundle('node_modules/smol-toml/dist/index.cjs', 'toml.cjs');
await bundle('node_modules/@secretlint/secretlint-rule-preset-recommend/module/index.js', 'secretlint.cjs');
// The MCP SDK and zod load only for `crux mcp`: src/cli/mcp/sdk.ts re-exports what the server uses, bundled apart
// as dist/mcp.cjs, which the mcp command loads at run time through its own code cache (made below).
await bundle('src/cli/mcp/sdk.ts', 'mcp.cjs', { stamp: true, plugins: [withoutAjv] });
// The MCP server's tool list, JSON Schemas and all, derived once here from the tools' zod shapes
// (src/cli/mcp/listing.ts) and carried by the main bundle as JSON text: a server answers `tools/list` with it.
async function derivedMcpListing() {
  const dir = mkdtempSync(join(tmpdir(), 'crux-listing-'));
  try {
    const script = join(dir, 'listing.cjs');
    await build({
      stdin: {
        contents:
          "import * as sdk from './src/cli/mcp/sdk'; import { deriveListing } from './src/cli/mcp/listing'; process.stdout.write(JSON.stringify(deriveListing(sdk)));",
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      outfile: script,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'warning',
    });
    return execFileSync(process.execPath, [script], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
await bundle('src/cli/main.ts', 'crux.cjs', {
  stamp: true,
  plugins: [lazyChildProcess, separatePostgres, separateToml, separateSecretRules],
  define: { CRUX_MCP_LISTING: JSON.stringify(await derivedMcpListing()) },
});
// The fast path (src/cli/fast), without commander or the other commands, in a bundle for each kind of call, so
// that none reads or initialises another's code: `session get` (fast-read.cjs), `session put|close` (fast.cjs),
// `case record` (fast-record.cjs), `session list` (fast-list.cjs), `case retrieve` (fast-retrieve.cjs).
for (const [entry, name, own] of [
  ['read-main.ts', 'fast-read', [quickDirStore]],
  ['main.ts', 'fast', []],
  ['record-main.ts', 'fast-record', []],
  ['list-main.ts', 'fast-list', [quickDirStore]],
  ['retrieve-main.ts', 'fast-retrieve', []],
]) {
  await bundle(`src/cli/fast/${entry}`, `${name}.cjs`, { stamp: true, ...noPostgres, plugins: [...own, ...noPostgres.plugins] });
  await bundle(`src/cli/fast/${entry}`, `${name}-pg.cjs`, { stamp: true, plugins: [...own, separatePostgres, separateToml, separateSecretRules] });
}

// The dashboard's front-end (`crux ui` alone reads it): dist/ui/.
await bundleUi();
// legalComments is 'none' (comments cost start-up): the notices of what the bundles carry ship beside them.
writeNotices(bundled);
// A bundle an older build made and this one does not (dist/loader.cjs, before bin/crux took the loader in) would
// be packed and shipped unused.
for (const name of readdirSync('dist')) if (name.endsWith('.cjs') && !built.has(`dist/${name}`)) rmSync(`dist/${name}`, { force: true });
const scratch = mkdtempSync(join(tmpdir(), 'crux-build-'));
try {
  // The build's loader (a script of this scratch directory, never packed): runs a bundle of dist/ through
  // src/cli/code-cache.ts with the build's hooks (src/cli/build-hooks.ts), which name the bundles whose shipped code
  // caches this process writes and the command lines it runs. Only this script sets them: no variable of the
  // environment reaches them, so an installed crux neither runs a warm-up nor writes into its package.
  const loader = join(scratch, 'loader.cjs');
  await build({
    stdin: {
      contents:
        "import { runBundle } from './src/cli/code-cache'; import { BUILD_HOOKS } from './src/cli/build-hooks'; const [file, hooks] = process.argv.slice(2); globalThis[BUILD_HOOKS] = JSON.parse(hooks); runBundle(require('node:path').resolve(file));",
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    outfile: loader,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  // The processes below get the builder's environment without its crux settings, and a cache directory of their
  // own (a code cache made on first use for another bundle, e.g. toml.cjs, stays out of the builder's home).
  const env = { ...process.env, XDG_CACHE_HOME: join(scratch, 'cache') };
  for (const key of Object.keys(env)) if (key.startsWith('CRUX_')) delete env[key];
  /** Runs dist/<name> in a process of its own with these hooks (its input: `input`). */
  const runWithHooks = (name, hooks, input) =>
    execFileSync(process.execPath, [loader, `dist/${name}`, JSON.stringify(hooks)], {
      env,
      input,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'],
    });
  // The full program's commands (the fast path's own are dist/fast.cjs's, below): a session written and listed,
  // a case recorded and retrieved, a journal checked, then an MCP client's session (initialize, the tool list, a
  // few calls) over stdin. One process makes both caches: crux.cjs's holds the MCP server's code (cli/mcp/ is
  // in the main bundle), mcp.cjs's the SDK and zod; an MCP session in a process of its own would leave the
  // server's code to compile from source at every `crux mcp` start.
  const d = ['--data-dir', join(scratch, 'data')];
  const rpc = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const call = (id, name, args) => rpc(id, 'tools/call', { name, arguments: args });
  const session = [
    rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'build', version: '0' } }),
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    rpc(2, 'tools/list', {}),
    call(3, 'session_put', { session_id: 'warm-up', state: { step: 1 } }),
    call(4, 'session_get', { session_id: 'warm-up' }),
    call(5, 'case_retrieve', { task: 'warm up the cache' }),
    call(6, 'session_get', { session_id: 'missing' }),
  ];
  const commands = [
    [...d, 'session', 'put', 'warm-up', '{"step":1}'],
    [...d, 'session', 'list', '--json'],
    [...d, 'case', 'record', '--task', 'warm up the cache', '--action', 'run', '--outcome', 'ok'],
    [...d, 'case', 'retrieve', 'warm', 'cache', '--json'],
    [...d, 'journal', 'check', '--json'],
    [...d, 'mcp', '--agent', 'build'],
  ];
  runWithHooks('crux.cjs', { writeCodeCache: ['crux.cjs', 'mcp.cjs'], warmUp: commands }, `${session.join('\n')}\n`);
  // The fast path's code caches (src/cli/launch.ts): a get's (dist/fast-read.cjs), over a store a process of its
  // own wrote, the session writes' (dist/fast.cjs), as most calls make them (a new session, a replace, a close),
  // and `case record`'s (dist/fast-record.cjs); each bundle's warm-up in a process of its own, which writes its cache.
  const warmBundle = (name, commands) => runWithHooks(name, { writeCodeCache: [name], warmUp: commands });
  // Each fast bundle and its twin with the PostgreSQL engine: the same warm-ups (a data directory's), the twin's
  // in a directory of its own, so that each meets the states the lines expect (a put before its close).
  const twinDir = join(scratch, 'data-pg');
  const warmBoth = (name, commands) => {
    warmBundle(`${name}.cjs`, commands);
    warmBundle(
      `${name}-pg.cjs`,
      commands.map((line) => line.map((arg) => (arg === d[1] ? twinDir : arg))),
    );
  };
  for (const dir of [d[1], twinDir]) {
    execFileSync(process.execPath, ['bin/crux', '--data-dir', dir, 'session', 'put', 'warm-read', '{"step":1}'], { env, stdio: 'ignore' });
  }
  warmBoth('fast-read', [
    [...d, 'session', 'get', 'warm-read'],
    [...d, 'session', 'get', 'warm-read', '--json'],
  ]);
  warmBoth('fast', [
    [...d, 'session', 'put', 'warm-fast', '{"step":1}'],
    [...d, 'session', 'put', 'warm-fast', '{"step":2}', '--add-tokens', '5', '--ttl', '2h'],
    [...d, 'session', 'put', 'warm-fast', '{"step":3}', '--json'],
    [...d, 'session', 'close', 'warm-fast', '--summary', 'done'],
  ]);
  warmBoth('fast-record', [
    [...d, 'case', 'record', '--task', 'warm up the fast path', '--action', 'run', '--outcome', 'ok', '--tag', 'warm'],
    [...d, 'case', 'record', '--task', 'warm up the fast path again', '--action', 'run', '--outcome', 'ok', '--json'],
  ]);
  // The queries' (dist/fast-list.cjs, dist/fast-retrieve.cjs): the lists and retrieves agents make (--json, a
  // table, --quiet, a limited list).
  warmBoth('fast-list', [
    [...d, 'session', 'list', '--stranded', '--limit', '24', '--json'],
    [...d, 'session', 'list'],
    [...d, 'session', 'list', '--all', '--quiet'],
  ]);
  warmBoth('fast-retrieve', [
    [...d, 'case', 'retrieve', 'warm', 'fast', '--json'],
    [...d, 'case', 'retrieve', 'warm', 'cache', '--only-success', '--top-k', '3'],
  ]);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
